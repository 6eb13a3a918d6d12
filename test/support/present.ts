/**
 * The value, or an Error naming what was missing: narrows a value a test knows exists (the first
 * row, a claimed run) without a non-null assertion, and fails with a message that says what was absent.
 */
export function present<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`expected ${what}, found ${String(value)}`);
  return value;
}
