import { backoffDelay, parseRateLimit, type RateLimitInfo } from './backoff';
import { TestrunApiError, TestrunNetworkError } from './errors';
import type { TestrunClientOptions } from './options';
import { readJson, toApiError } from './responses';

export type RequestOptions = {
  body?: unknown;
  /** A body of bytes, sent as application/octet-stream (instead of `body`). */
  bytes?: Uint8Array<ArrayBuffer>;
  idempotencyKey?: string;
  deadline?: number;
  signal?: AbortSignal;
  /** Sent as `Prefer: wait=N`: the server may hold the answer up to N s for a change (long polling). */
  waitSeconds?: number;
};
export type Response<T> = { body: T; status: number; headers: Headers };
/** An earlier answer and its `ETag`: sent as `If-None-Match`, and what a 304 stands for. */
export type Cached<T> = { etag: string; body: T };
/** The client's options with every default filled in. */
export type ResolvedOptions = Required<Omit<TestrunClientOptions, 'onRetry'>> & Pick<TestrunClientOptions, 'onRetry'>;

/**
 * The HTTP side of a {@link TestrunClient}: checks the options and fills in their defaults, sends
 * one request with the key and headers, and retries it within bounds: GETs (and PUTs and DELETEs,
 * which are idempotent) on network faults and 5xx; POSTs also on 409 (the same key is still in flight), which is safe because every POST carries
 * an `Idempotency-Key`; any request on 429, after `Retry-After` (else jittered exponential backoff).
 */
export class Transport {
  private readonly base: string;
  readonly options: ResolvedOptions;

  constructor(
    options: TestrunClientOptions,
    /** Called with the rate-limit state each answer reports, if it reports one. */
    private readonly onRateLimit: (info: RateLimitInfo) => void,
  ) {
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

  /** One request, retried as the class says; with `cached`, a conditional GET whose 304 answers `cached.body`. */
  async request<T>(
    method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE',
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
    if (options.bytes !== undefined) headers['content-type'] = 'application/octet-stream';
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    if (options.waitSeconds !== undefined) headers.prefer = `wait=${options.waitSeconds}`;
    if (cached) headers['if-none-match'] = cached.etag;
    const payload = options.bytes ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    let faults = 0;
    let rateLimited = 0;
    for (;;) {
      options.signal?.throwIfAborted();
      let error: TestrunApiError | TestrunNetworkError;
      try {
        const res = await this.send(method, path, headers, payload, options.signal, (options.waitSeconds ?? 0) * 1000);
        const rateLimit = parseRateLimit(res.headers);
        if (rateLimit) this.onRateLimit(rateLimit);
        if (res.status === 204 || (method === 'HEAD' && res.ok))
          return { body: undefined as T, status: res.status, headers: res.headers };
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
    body: string | Uint8Array<ArrayBuffer> | undefined,
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
export function waited(res: Response<unknown>): boolean {
  return /\bwait=/.test(res.headers.get('preference-applied') ?? '');
}
