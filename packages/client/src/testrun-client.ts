import { randomUUID } from 'node:crypto';
import {
  isTerminalRunStatus,
  type ProjectList,
  type ProjectRunsCreated,
  type Run,
  type RunCreateRequest,
  type RunCreateResponse,
  type RunList,
  type SingleRunCreated,
  type SuiteRun,
  type SuiteRunCreated,
  type SuiteRunList,
  type SuiteRunRerunRequest,
} from '@testrun/contracts';
import { backoffDelay, parseAlternateLink, parseRateLimit, type RateLimitInfo } from './backoff';
import { isTransientError, TestrunApiError, TestrunNetworkError, TestrunWaitTimeoutError } from './errors';
import type {
  EnqueueOptions,
  EnqueueResult,
  RunListFilters,
  RunWithLink,
  SuiteRunListFilters,
  TestrunClientOptions,
  WaitOptions,
} from './options';
import { readJson, toApiError } from './responses';

type RequestOptions = {
  body?: unknown;
  idempotencyKey?: string;
  deadline?: number;
  signal?: AbortSignal;
  /** Sent as `Prefer: wait=N`: the server may hold the answer up to N s for a change (long polling). */
  waitSeconds?: number;
};
/** What one read of a wait loop gives: the state, and whether the server already waited for a change. */
type PollRead<T> = { state: T; waited: boolean };
type PollReadOptions = { deadline: number; signal?: AbortSignal; waitSeconds?: number };
type Response<T> = { body: T; status: number; headers: Headers };
/** An earlier answer and its `ETag`: sent as `If-None-Match`, and what a 304 stands for. */
type Cached<T> = { etag: string; body: T };

export const DEFAULT_WAIT_TIMEOUT_MS = 15 * 60_000;
export const DEFAULT_POLL_INTERVAL_MS = 3_000;
/** The longest `Prefer: wait` the wait helpers ask for: well inside proxies' idle time-outs. */
const LONG_POLL_SECONDS = 25;

/**
 * Typed client of the Testrun HTTP API (v1). Every method speaks the contracts' types. Requests
 * are retried within bounds: GETs on network faults and 5xx; POSTs also on 409 (the same key is
 * still in flight), which is safe because every POST carries an `Idempotency-Key`; any request on
 * 429, after `Retry-After` (else jittered exponential backoff).
 */
export class TestrunClient {
  private readonly base: string;
  private readonly options: Required<Omit<TestrunClientOptions, 'onRetry'>> & Pick<TestrunClientOptions, 'onRetry'>;
  /** The most recent rate-limit state the server reported, if it reports one. */
  lastRateLimit: RateLimitInfo | null = null;

  constructor(options: TestrunClientOptions) {
    if (!options.apiUrl) throw new Error('apiUrl is required');
    if (!options.apiKey) throw new Error('apiKey is required');
    let base: URL;
    try {
      base = new URL(options.apiUrl);
    } catch {
      throw new Error(`apiUrl is not an absolute URL: ${options.apiUrl}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:')
      throw new Error(`apiUrl must be http(s): ${options.apiUrl}`);
    this.base = base
      .toString()
      .replace(/\/+$/, '')
      .replace(/\/api\/v1$/, '');
    this.options = {
      maxRetries: 4,
      maxRateLimitRetries: 30,
      requestTimeoutMs: 30_000,
      backoffBaseMs: 500,
      backoffMaxMs: 30_000,
      userAgent: 'testrun-client',
      fetch: (...args) => globalThis.fetch(...args),
      now: Date.now,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      random: Math.random,
      ...options,
    };
  }

  /** Enqueues one test: 201 `{ runId }`. */
  enqueueTest(
    testId: string,
    request: Omit<RunCreateRequest, 'testId' | 'projectSlug' | 'suiteSlug'> = {},
    options: EnqueueOptions = {},
  ) {
    return this.enqueue({ ...request, testId }, options) as Promise<EnqueueResult<SingleRunCreated>>;
  }

  /** Enqueues one suite of a project: 201 `{ suiteRunId }`. */
  enqueueSuite(
    projectSlug: string,
    suiteSlug: string,
    request: Omit<RunCreateRequest, 'testId' | 'projectSlug' | 'suiteSlug'> = {},
    options: EnqueueOptions = {},
  ) {
    return this.enqueue({ ...request, projectSlug, suiteSlug }, options) as Promise<EnqueueResult<SuiteRunCreated>>;
  }

  /** Enqueues every suite of a project: 201 `{ runIds }`. */
  enqueueProject(
    projectSlug: string,
    request: Omit<RunCreateRequest, 'testId' | 'projectSlug' | 'suiteSlug'> = {},
    options: EnqueueOptions = {},
  ) {
    return this.enqueue({ ...request, projectSlug }, options) as Promise<EnqueueResult<ProjectRunsCreated>>;
  }

  /** POST /api/v1/runs in whichever mode `request` addresses. */
  async enqueue(request: RunCreateRequest, options: EnqueueOptions = {}): Promise<EnqueueResult> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    const res = await this.request<RunCreateResponse>('POST', '/api/v1/runs', { body: request, idempotencyKey });
    return { body: res.body, idempotencyKey, replayed: res.headers.get('idempotent-replayed') === 'true' };
  }

  /**
   * POST /api/v1/suite-runs/:id/rerun: 201 `{ suiteRunId }` of a new suite run of the original's
   * failed and error children (`only: "failed"`) or all of them, with its base URL, headers and variables.
   */
  async rerunSuiteRun(
    suiteRunId: string,
    request: SuiteRunRerunRequest,
    options: EnqueueOptions = {},
  ): Promise<EnqueueResult<SuiteRunCreated>> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    const path = `/api/v1/suite-runs/${encodeURIComponent(suiteRunId)}/rerun`;
    const res = await this.request<SuiteRunCreated>('POST', path, { body: request, idempotencyKey });
    return { body: res.body, idempotencyKey, replayed: res.headers.get('idempotent-replayed') === 'true' };
  }

  /**
   * POST /api/v1/runs/:id/cancel: 202 with the run as it is right after (a queued run is already
   * skipped; a running one is being stopped). A cancel can be repeated, so it is retried like a GET.
   */
  async cancelRun(runId: string, options: { deadline?: number; signal?: AbortSignal } = {}): Promise<Run> {
    return (await this.request<Run>('POST', `/api/v1/runs/${encodeURIComponent(runId)}/cancel`, options)).body;
  }

  /** POST /api/v1/suite-runs/:id/cancel: cancels every child; 202 with the suite run as it is right after. */
  async cancelSuiteRun(
    suiteRunId: string,
    options: { deadline?: number; signal?: AbortSignal } = {},
  ): Promise<SuiteRun> {
    const path = `/api/v1/suite-runs/${encodeURIComponent(suiteRunId)}/cancel`;
    return (await this.request<SuiteRun>('POST', path, options)).body;
  }

  /** GET /api/v1/runs/:id. */
  async getRun(runId: string): Promise<Run> {
    return (await this.getRunWithLink(runId)).run;
  }

  /** GET /api/v1/runs/:id, with the view link from the `Link` header. */
  async getRunWithLink(runId: string, options: { deadline?: number; signal?: AbortSignal } = {}): Promise<RunWithLink> {
    const { run, viewUrl } = await this.readRun(runId, options);
    return { run, viewUrl };
  }

  /** GET /api/v1/suite-runs/:id. */
  async getSuiteRun(suiteRunId: string, options: { deadline?: number; signal?: AbortSignal } = {}): Promise<SuiteRun> {
    return (await this.readSuiteRun(suiteRunId, options)).state;
  }

  /** GET /api/v1/projects: the workspace's projects, their suites and tests (ids, keys, names, enabled). */
  async listProjects(): Promise<ProjectList> {
    return (await this.request<ProjectList>('GET', '/api/v1/projects')).body;
  }

  /** GET /api/v1/runs: one page of runs, newest first; pass `next_cursor` as `cursor` for the next. */
  async listRuns(filters: RunListFilters = {}): Promise<RunList> {
    return (await this.request<RunList>('GET', `/api/v1/runs${listingQuery(filters)}`)).body;
  }

  /** GET /api/v1/suite-runs: one page of suite runs (without their per-test entries), newest first. */
  async listSuiteRuns(filters: SuiteRunListFilters = {}): Promise<SuiteRunList> {
    return (await this.request<SuiteRunList>('GET', `/api/v1/suite-runs${listingQuery(filters)}`)).body;
  }

  private async readRun(
    runId: string,
    options: RequestOptions,
    cached?: Cached<Run>,
  ): Promise<RunWithLink & { waited: boolean; etag: string | null }> {
    const res = await this.request<Run>('GET', `/api/v1/runs/${encodeURIComponent(runId)}`, options, cached);
    const viewUrl = parseAlternateLink(res.headers.get('link'));
    return { run: res.body, viewUrl, waited: waited(res), etag: res.headers.get('etag') };
  }

  private async readSuiteRun(
    suiteRunId: string,
    options: RequestOptions,
    cached?: Cached<SuiteRun>,
  ): Promise<PollRead<SuiteRun> & { etag: string | null }> {
    const path = `/api/v1/suite-runs/${encodeURIComponent(suiteRunId)}`;
    const res = await this.request<SuiteRun>('GET', path, options, cached);
    return { state: res.body, waited: waited(res), etag: res.headers.get('etag') };
  }

  /**
   * Polls a run until it is terminal; rejects with {@link TestrunWaitTimeoutError} when the budget
   * runs out. Each poll after the first sends the last answer's `ETag` as `If-None-Match`, so an
   * unchanged run costs the server no body (304).
   */
  async waitForRun(runId: string, options: WaitOptions<Run> = {}): Promise<Run> {
    let cached: Cached<Run> | undefined;
    return this.poll(
      `Run ${runId}`,
      options,
      async (o) => {
        const r = await this.readRun(runId, o, cached);
        cached = r.etag ? { etag: r.etag, body: r.run } : undefined;
        return { state: r.run, waited: r.waited };
      },
      (run) => isTerminalRunStatus(run.status),
    );
  }

  /** Polls a suite run until it is terminal (every child terminal), conditionally as {@link waitForRun} does. */
  async waitForSuiteRun(suiteRunId: string, options: WaitOptions<SuiteRun> = {}): Promise<SuiteRun> {
    let cached: Cached<SuiteRun> | undefined;
    return this.poll(
      `Suite run ${suiteRunId}`,
      options,
      async (o) => {
        const r = await this.readSuiteRun(suiteRunId, o, cached);
        cached = r.etag ? { etag: r.etag, body: r.state } : undefined;
        return r;
      },
      (s) => isTerminalRunStatus(s.status),
    );
  }

  /**
   * Polls a set of runs (project mode) until every one is terminal. Each round reads only the runs
   * not yet terminal, so the request count shrinks as runs finish. Results keep the order of `runIds`.
   */
  async waitForRuns(runIds: readonly string[], options: WaitOptions<Run[]> = {}): Promise<Run[]> {
    const known = new Map<string, Run>();
    // Plain polls: a long poll of each run in turn would hold the round on the first one.
    const read = async ({ deadline, signal }: PollReadOptions): Promise<PollRead<Run[]>> => {
      const runs: Run[] = [];
      for (const id of runIds) {
        let run = known.get(id);
        if (!run || !isTerminalRunStatus(run.status)) {
          run = (await this.getRunWithLink(id, { deadline, signal })).run;
          known.set(id, run);
        }
        runs.push(run);
      }
      return { state: runs, waited: false };
    };
    return this.poll(`${runIds.length} runs`, options, read, (runs) =>
      runs.every((r) => isTerminalRunStatus(r.status)),
    );
  }

  private async poll<T>(
    what: string,
    options: WaitOptions<T>,
    read: (o: PollReadOptions) => Promise<PollRead<T>>,
    done: (state: T) => boolean,
  ): Promise<T> {
    const { now, sleep } = this.options;
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    const interval = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    const deadline = now() + timeoutMs;
    let last: T | null = null;
    for (;;) {
      options.signal?.throwIfAborted();
      // Ask the server to hold the answer for a change, leaving a second of the budget to spare.
      const waitSeconds = Math.min(LONG_POLL_SECONDS, Math.floor((deadline - now()) / 1000) - 1);
      let serverWaited = false;
      try {
        const result = await read({
          deadline,
          signal: options.signal,
          ...(options.longPoll !== false && waitSeconds > 0 ? { waitSeconds } : {}),
        });
        last = result.state;
        serverWaited = result.waited;
        options.onProgress?.(last);
        if (done(last)) return last;
      } catch (e) {
        // A rate limit or a fault that outlived the request's own retries is not a verdict: keep
        // waiting while there is budget. Anything else (401, 404, …) will not get better.
        if (!isTransientError(e) || now() >= deadline) {
          if (isTransientError(e)) throw new TestrunWaitTimeoutError(timeoutMs, last, what);
          throw e;
        }
      }
      const left = deadline - now();
      if (left <= 0) throw new TestrunWaitTimeoutError(timeoutMs, last, what);
      // The server held the answer until a change or its wait ran out: ask again at once.
      if (!serverWaited) await sleep(Math.min(interval, left));
    }
  }

  /** One request, retried as the class says; with `cached`, a conditional GET whose 304 answers `cached.body`. */
  private async request<T>(
    method: 'GET' | 'POST',
    path: string,
    options: RequestOptions = {},
    cached?: Cached<T>,
  ): Promise<Response<T>> {
    const o = this.options;
    const headers: Record<string, string> = {
      authorization: `Bearer ${o.apiKey}`,
      accept: 'application/json, application/problem+json',
      'user-agent': o.userAgent,
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    if (options.waitSeconds !== undefined) headers.prefer = `wait=${options.waitSeconds}`;
    if (cached) headers['if-none-match'] = cached.etag;
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    let faults = 0;
    let rateLimited = 0;
    for (;;) {
      options.signal?.throwIfAborted();
      let error: TestrunApiError | TestrunNetworkError;
      try {
        const res = await this.send(method, path, headers, payload, options.signal, (options.waitSeconds ?? 0) * 1000);
        this.lastRateLimit = parseRateLimit(res.headers) ?? this.lastRateLimit;
        if (res.ok) return { body: (await readJson(res)) as T, status: res.status, headers: res.headers };
        if (res.status === 304 && cached) return { body: cached.body, status: 304, headers: res.headers };
        error = await toApiError(res, o.now());
      } catch (e) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (!(e instanceof TestrunNetworkError)) throw e;
        error = e;
      }
      const status = error instanceof TestrunApiError ? error.status : null;
      const retryAfterMs = error instanceof TestrunApiError ? error.retryAfterMs : null;
      let delayMs: number;
      if (status === 429) {
        if (rateLimited >= o.maxRateLimitRetries) throw error;
        delayMs = retryAfterMs ?? this.backoff(rateLimited);
        rateLimited += 1;
      } else if (status === null || status >= 500 || (status === 409 && method === 'POST')) {
        if (faults >= o.maxRetries) throw error;
        delayMs = retryAfterMs ?? this.backoff(faults);
        faults += 1;
      } else {
        throw error;
      }
      // Sleeping past the caller's deadline would only delay the verdict it already has.
      if (options.deadline !== undefined && o.now() + delayMs > options.deadline) throw error;
      o.onRetry?.({ method, path, attempt: faults + rateLimited, delayMs, status, reason: error.message });
      await o.sleep(delayMs);
    }
  }

  private backoff(attempt: number): number {
    return backoffDelay(attempt, {
      baseMs: this.options.backoffBaseMs,
      maxMs: this.options.backoffMaxMs,
      random: this.options.random,
    });
  }

  private async send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
    /** How long the server may hold the answer on purpose (a long poll), on top of the request time-out. */
    heldMs: number,
  ) {
    const timeout = AbortSignal.timeout(this.options.requestTimeoutMs + heldMs);
    try {
      return await this.options.fetch(`${this.base}${path}`, {
        method,
        headers,
        body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        redirect: 'error',
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = timeout.aborted
        ? `no answer within ${this.options.requestTimeoutMs + heldMs} ms`
        : (cause?.code ?? cause?.message ?? (e as Error).message);
      throw new TestrunNetworkError(`${method} ${this.base}${path} failed: ${why}`, { cause: e });
    }
  }
}

/** A listing's query string: the filters given, statuses comma-separated; the API checks them. */
function listingQuery(filters: RunListFilters): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) {
    if (value === undefined) continue;
    params.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const query = params.toString();
  return query ? `?${query}` : '';
}

/** Whether the server honoured a `Prefer: wait` (RFC 7240 `Preference-Applied`). */
function waited(res: Response<unknown>): boolean {
  return /\bwait=/.test(res.headers.get('preference-applied') ?? '');
}
