/**
 * The value, or an Error naming what was missing: narrows a value a test knows exists (the first
 * row, a claimed run) without a non-null assertion, and fails with a message that says what was absent.
 */
export function present<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`expected ${what}, found ${String(value)}`);
  return value;
}

/** What `work` rejected with; fails the test when it does not reject. */
export async function rejectionOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (e) {
    return e;
  }
  throw new Error('expected the work to fail');
}
