import { collectProcessMetrics } from '@testrun/core/process-metrics';
import { Counter, Histogram, Registry } from 'prom-client';

/** Methods kept as they are in the `method` label; any other is `other`, so a client cannot add series. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The `route` label of a request that matched no route (404s, requests refused before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Why a request was refused with a 429: its API key's limit, or too many bad keys from its address. */
export type RateLimitScope = 'key' | 'address';

/**
 * The API's Prometheus metrics in a registry of their own (never prom-client's global one), so that
 * several apps in one process (the tests) each count their own. Label values are route templates,
 * methods and statuses only: never a workspace, key, run id or raw path.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  private readonly requestDuration = new Histogram({
    name: 'testrun_api_request_duration_seconds',
    help: 'Time from the request arriving to its response being written, by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  private readonly rateLimited = new Counter({
    name: 'testrun_api_rate_limit_refusals_total',
    help: 'Requests refused with 429: scope "key" for an API key over its limit, "address" for too many failed authentications.',
    labelNames: ['scope'] as const,
    registers: [this.registry],
  });
  private readonly replays = new Counter({
    name: 'testrun_api_idempotency_replays_total',
    help: 'POST /api/v1/runs answered from a kept Idempotency-Key response instead of creating runs, by replayed status.',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  constructor() {
    collectProcessMetrics(this.registry);
  }

  /**
   * Counts one finished request. `route` must be a template or {@link UNMATCHED_ROUTE}. About a
   * microsecond per call (prom-client hashes the label set on each observation).
   */
  observeRequest(route: string, method: string, status: number, seconds: number): void {
    this.requestDuration.observe(
      { route, method: KNOWN_METHODS.has(method) ? method : 'other', status: String(status) },
      seconds,
    );
  }

  countRateLimited(scope: RateLimitScope): void {
    this.rateLimited.inc({ scope });
  }

  countReplay(status: number): void {
    this.replays.inc({ status: String(status) });
  }
}
