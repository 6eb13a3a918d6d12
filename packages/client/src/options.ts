import type { Run, RunCreateResponse, RunStatus } from '@testrun/contracts';

/** Options of a {@link TestrunClient}. */
export interface TestrunClientOptions {
  /** Origin (and optional path prefix) of the service, e.g. `https://testrun.example.com`. A trailing `/api/v1` is accepted. */
  apiUrl: string;
  /** API key sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Retries of a request after a network fault, a 5xx, or (POST only) a 409 in-flight answer. Default 4. */
  maxRetries?: number;
  /** Retries of a request answered 429. Default 30: a rate limit is a reason to wait, not to give up. */
  maxRateLimitRetries?: number;
  /** Per-request timeout in ms; a request that takes longer counts as a network fault. Default 30 000. */
  requestTimeoutMs?: number;
  /** First backoff delay in ms when the server gives no `Retry-After`. Default 500. */
  backoffBaseMs?: number;
  /** Ceiling of a backoff delay in ms. Default 30 000. */
  backoffMaxMs?: number;
  /** `User-Agent` header. Default `testrun-client`. */
  userAgent?: string;
  /** Called before each retry, e.g. to tell a person why nothing happens for a while. */
  onRetry?: (info: RetryInfo) => void;
  /** HTTP implementation. Default the global `fetch`. */
  fetch?: typeof fetch;
  /** Wall clock in ms. Default `Date.now`. Injected by tests together with `sleep`. */
  now?: () => number;
  /** Waits `ms` milliseconds. Default a `setTimeout` promise. */
  sleep?: (ms: number) => Promise<void>;
  /** Randomness in [0, 1) for jitter. Default `Math.random`. */
  random?: () => number;
}

/** Why a request is about to be retried, and after how long. */
export interface RetryInfo {
  method: string;
  path: string;
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  /** HTTP status that caused the retry, or null for a network fault. */
  status: number | null;
  reason: string;
}

/** Options of an enqueue call. */
export interface EnqueueOptions {
  /**
   * Sent as `Idempotency-Key`. Default a random UUID, so the client's own retries of this call can
   * never enqueue twice; give a stable key to make repeated calls (a re-run CI step) safe too.
   */
  idempotencyKey?: string;
}

/** What an enqueue call returns: the response body of the mode used, and how it was obtained. */
export interface EnqueueResult<T extends RunCreateResponse = RunCreateResponse> {
  body: T;
  /** The key that was sent. */
  idempotencyKey: string;
  /** True when the service replayed an earlier answer to the same key (`Idempotent-Replayed: true`). */
  replayed: boolean;
}

/** Options of the wait helpers. */
export interface WaitOptions<T> {
  /** Budget of the whole wait in ms. Default 900 000 (15 minutes). */
  timeoutMs?: number;
  /** Delay between two polls in ms when the server does not long-poll. Default 3 000. */
  pollIntervalMs?: number;
  /**
   * Ask the server to hold each poll until the state changes (`Prefer: wait=25`), so a change is seen
   * at once and a long wait costs few requests. Default true; a server that does not honour it is
   * polled every `pollIntervalMs` as before.
   */
  longPoll?: boolean;
  /** Called with every state read while waiting (including the final one). */
  onProgress?: (state: T) => void;
  /** Stops the wait early (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** A run with the link for people that the API sends in its `Link: <…>; rel="alternate"` header. */
export interface RunWithLink {
  run: Run;
  viewUrl: string | null;
}

/** Filters and page of GET /api/v1/suite-runs, as the API takes them (docs/API.md, listings). */
export interface SuiteRunListFilters {
  projectSlug?: string;
  /** Needs projectSlug. */
  suiteSlug?: string;
  /** One status, several comma-separated, or a list. */
  status?: string | readonly RunStatus[];
  /** RFC 3339 instants. */
  createdAfter?: string;
  createdBefore?: string;
  /** 1 to 100 (default 20). */
  limit?: number;
  /** The `next_cursor` of the previous page, with the same filters. */
  cursor?: string;
}

/** Filters and page of GET /api/v1/runs: the suite-run listing's, and a test or a suite run. */
export interface RunListFilters extends SuiteRunListFilters {
  testId?: string;
  suiteRunId?: string;
}

/** Whose visual changes an approval approves: one run's, or those of every run of a suite run. */
export type VisualTarget = { runId: string } | { suiteRunId: string };
