/** Thrown by {@link withTimeout} when the work did not settle in time. */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(`${what} did not finish within ${ms} ms`);
  }
}

/**
 * Settles like `work`, or rejects with a {@link TimeoutError} naming `what` once `ms` have passed.
 * The timer never outlives the race, and a rejection of `work` that comes after the deadline is
 * absorbed (the caller has moved on; it must not surface as an unhandled rejection).
 */
export async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new TimeoutError(what, ms));
    }, ms);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, expiry]);
  } finally {
    clearTimeout(timer);
  }
}
