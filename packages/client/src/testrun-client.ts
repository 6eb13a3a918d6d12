import { randomUUID } from 'node:crypto';
import {
  isTerminalRunStatus,
  type ProjectRunsCreated,
  type Run,
  type RunCreateRequest,
  type RunCreateResponse,
  type SingleRunCreated,
  type SuiteRun,
  type SuiteRunCreated,
  type SuiteRunRerunRequest,
} from '@testrun/contracts';
import { backoffDelay, parseAlternateLink, parseRateLimit, type RateLimitInfo } from './backoff';
import { isTransientError, TestrunApiError, TestrunNetworkError, TestrunWaitTimeoutError } from './errors';
import type { EnqueueOptions, EnqueueResult, RunWithLink, TestrunClientOptions, WaitOptions } from './options';
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

  private async readRun(runId: string, options: RequestOptions): Promise<RunWithLink & { waited: boolean }> {
    const res = await this.request<Run>('GET', `/api/v1/runs/${encodeURIComponent(runId)}`, options);
    return { run: res.body, viewUrl: parseAlternateLink(res.headers.get('link')), waited: waited(res) };
  }

  private async readSuiteRun(suiteRunId: string, options: RequestOptions): Promise<PollRead<SuiteRun>> {
    const res = await this.request<SuiteRun>('GET', `/api/v1/suite-runs/${encodeURIComponent(suiteRunId)}`, options);
    return { state: res.body, waited: waited(res) };
  }

  /** Polls a run until it is terminal; rejects with {@link TestrunWaitTimeoutError} when the budget runs out. */
  async waitForRun(runId: string, options: WaitOptions<Run> = {}): Promise<Run> {
    return this.poll(
      `Run ${runId}`,
      options,
      (o) => this.readRun(runId, o).then((r) => ({ state: r.run, waited: r.waited })),
      (run) => isTerminalRunStatus(run.status),
    );
  }

  /** Polls a suite run until it is terminal (every child terminal). */
  async waitForSuiteRun(suiteRunId: string, options: WaitOptions<SuiteRun> = {}): Promise<SuiteRun> {
    return this.poll(
      `Suite run ${suiteRunId}`,
      options,
      (o) => this.readSuiteRun(suiteRunId, o),
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

  private async request<T>(method: 'GET' | 'POST', path: string, options: RequestOptions = {}): Promise<Response<T>> {
    const o = this.options;
    const headers: Record<string, string> = {
      authorization: `Bearer ${o.apiKey}`,
      accept: 'application/json, application/problem+json',
      'user-agent': o.userAgent,
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    if (options.waitSeconds !== undefined) headers.prefer = `wait=${options.waitSeconds}`;
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

/** Whether the server honoured a `Prefer: wait` (RFC 7240 `Preference-Applied`). */
function waited(res: Response<unknown>): boolean {
  return /\bwait=/.test(res.headers.get('preference-applied') ?? '');
}
