import { setTimeout as sleep } from 'node:timers/promises';

/** Options of {@link retryWrite}. */
export interface RetryWriteOptions {
  /** Longest the retries may go on, from the first try; the worker's lock duration. */
  boundMs: number;
  /** Told before each retry. Default nobody. */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  /** First pause, doubled after each failure up to `maxDelayMs`. Default 100 ms. */
  firstDelayMs?: number;
  /** Longest pause between tries. Default 2000 ms. */
  maxDelayMs?: number;
}

/**
 * True for an error no retry can fix: a Postgres data, integrity or syntax error (SQLSTATE classes
 * 22, 23, 42) or a Prisma request error (P2xxx) other than a pool timeout (P2024) or a transaction
 * that could not start or finish in time (P2028, the claim's transaction during an outage), looking
 * through wrapped causes. A Prisma error that carries the driver's error (`meta.driverAdapterError`:
 * P2010 raw query failed, P2039 database error) is judged by that one (its SQLSTATE in `code`, or
 * `originalCode` where the adapter names the kind, as for a unique violation): Prisma gives the same
 * code to a syntax error and to "the database system is shutting down" alike.
 * Anything else (refused, reset, "the database system is starting up") may pass later.
 */
export function isPermanentWriteError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const e: { code?: unknown; originalCode?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } } =
      current;
    if (e.meta?.driverAdapterError) {
      current = e.meta.driverAdapterError;
      continue;
    }
    // The pg adapter names Postgres's SQLSTATE `originalCode` on the errors it maps to a kind of its
    // own (UniqueConstraintViolation, TableDoesNotExist...), `code` on the rest.
    const code = e.code ?? e.originalCode;
    if (typeof code === 'string' && (/^(22|23|42)[0-9A-Z]{3}$/.test(code) || /^P2(?!024|028)\d{3}$/.test(code)))
      return true;
    current = e.cause;
  }
  return false;
}

/**
 * Runs a write of a run's results, trying again with backoff while it fails for a reason that may
 * pass (Postgres restarting, a dropped connection), for at most `boundMs`: a run whose result could
 * be written a few seconds later is not declared lost. The last error is thrown when the bound is
 * reached or the error is permanent.
 */
export async function retryWrite<T>(write: () => Promise<T>, options: RetryWriteOptions): Promise<T> {
  const began = Date.now();
  let delayMs = options.firstDelayMs ?? 100;
  const maxDelayMs = options.maxDelayMs ?? 2_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      const left = options.boundMs - (Date.now() - began);
      if (isPermanentWriteError(error) || left <= 0) throw error;
      const pause = Math.min(delayMs, left);
      options.onRetry?.(error, attempt, pause);
      await sleep(pause);
      delayMs = Math.min(delayMs * 2, maxDelayMs);
    }
  }
}
