import { formatDuration, type ProblemCode, type ProblemFieldError } from '@testrun/contracts';

/** `code` of an error response that was not a problem document (a proxy's HTML page, for example). */
export type UnexpectedResponseCode = 'unexpected_response';

/**
 * The API answered with an error status. Built from the problem+json body when there is one, so
 * callers can branch on `code` (stable) rather than on `detail` (for people).
 */
export class TestrunApiError extends Error {
  override readonly name = 'TestrunApiError';
  /** HTTP status of the response. */
  readonly status: number;
  /** Problem code from the body, or `unexpected_response` when the body was not a problem document. */
  readonly code: ProblemCode | UnexpectedResponseCode;
  readonly title: string;
  /** What went wrong, for people. */
  readonly detail: string;
  /** Per-field problems of a 400 `invalid_body` or a 422 `limit_exceeded`; empty otherwise. */
  readonly errors: ProblemFieldError[];
  /** Delay the server asked for (`Retry-After`), in milliseconds, or null. */
  readonly retryAfterMs: number | null;

  constructor(init: {
    status: number;
    code: ProblemCode | UnexpectedResponseCode;
    title: string;
    detail: string;
    errors?: ProblemFieldError[];
    retryAfterMs?: number | null;
  }) {
    super(`${init.status} ${init.code}: ${init.detail}`);
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.detail = init.detail;
    this.errors = init.errors ?? [];
    this.retryAfterMs = init.retryAfterMs ?? null;
  }
}

/** The request never got an HTTP answer: refused, reset, DNS, or the per-request timeout. */
export class TestrunNetworkError extends Error {
  override readonly name = 'TestrunNetworkError';
}

/** A wait ran out of budget before everything was terminal; `last` is the latest state seen. */
export class TestrunWaitTimeoutError<T = unknown> extends Error {
  override readonly name = 'TestrunWaitTimeoutError';
  readonly timeoutMs: number;
  readonly last: T | null;
  constructor(timeoutMs: number, last: T | null, what: string) {
    super(`${what} did not finish within the wait budget of ${formatDuration(timeoutMs)}`);
    this.timeoutMs = timeoutMs;
    this.last = last;
  }
}

/** Whether an error is worth retrying later: rate limited, server fault, or no answer at all. */
export function isTransientError(e: unknown): boolean {
  if (e instanceof TestrunNetworkError) return true;
  if (e instanceof TestrunApiError) return e.status === 429 || e.status >= 500;
  return false;
}
