import { ConfigError, readCommonConfig, readInt, readString, type CommonConfig } from '@testrun/core/env';
import { readTargetPolicyConfig, type TargetPolicyConfig } from '@testrun/core/target-policy';
import { readTrustProxy, type TrustProxy } from './trust-proxy';

/** Everything the API process reads from its environment, once, at start. */
export type ApiConfig = CommonConfig & {
  /** TCP port to listen on (PORT, default 3000; 0 picks a free port). */
  port: number;
  /** Requests per window per API key, shared by every replica (RATE_LIMIT_PER_MINUTE, default 60). */
  rateLimitPerMinute: number;
  /**
   * The fixed window of the per-key limit, in milliseconds (RATE_LIMIT_WINDOW_MS, default 60000: a
   * minute, as the contract says; a shorter one lets tests see a window end without waiting a minute).
   */
  rateLimitWindowMs: number;
  /** Requests per minute per client address that fail authentication (RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE, default 30). */
  unauthenticatedRateLimitPerMinute: number;
  /**
   * Proxies trusted to give the client address in X-Forwarded-For (TRUST_PROXY: a hop count or the
   * proxies' addresses behind a load balancer; `true` is one hop; default false, the header is ignored).
   */
  trustProxy: TrustProxy;
  /** TARGET_ALLOW, TARGET_DENY and the protected endpoints: the enqueue check of `baseUrl` (docs/NETWORK_POLICY.md). */
  targetPolicy: TargetPolicyConfig;
  /** Where `GET /metrics` is served (METRICS_PORT, METRICS_HOST; docs/METRICS.md). */
  metrics: MetricsExposure;
  /**
   * Requests this replica holds at once for `Prefer: wait=N` (LONG_POLL_MAX_WAITERS, default 1000;
   * 0 turns long polling off). Past it a request is answered at once, without Preference-Applied.
   */
  longPollMaxWaiters: number;
  /**
   * How many of those places one workspace may hold (LONG_POLL_MAX_WAITERS_PER_WORKSPACE, default
   * 100), so one tenant's long polls cannot take them all. Past it the workspace's request is
   * answered at once, as past the replica's cap.
   */
  longPollMaxWaitersPerWorkspace: number;
};

/**
 * Where the Prometheus metrics are served. `api` (METRICS_PORT unset): on the API's own port, like
 * /healthz. `port`: only on a listener of their own (METRICS_PORT a port, bound to METRICS_HOST,
 * default 0.0.0.0), so the tenant-facing port and its ingress never show them. `off` (METRICS_PORT=off).
 */
type MetricsExposure = { where: 'api' } | { where: 'off' } | { where: 'port'; port: number; host: string };

function readMetricsExposure(env: Record<string, string | undefined>): MetricsExposure {
  const raw = env.METRICS_PORT?.trim();
  if (raw === undefined || raw === '') return { where: 'api' };
  if (raw === 'off') return { where: 'off' };
  if (!/^\d+$/.test(raw)) throw new ConfigError(`METRICS_PORT must be a port number or "off", got "${raw}"`);
  return {
    where: 'port',
    port: readInt(env, 'METRICS_PORT', 0, { min: 0, max: 65_535 }),
    host: readString(env, 'METRICS_HOST', '0.0.0.0'),
  };
}

const API_DEFAULTS = {
  port: 3000,
  rateLimitPerMinute: 60,
  rateLimitWindowMs: 60_000,
  unauthenticatedRateLimitPerMinute: 30,
  longPollMaxWaiters: 1_000,
  longPollMaxWaitersPerWorkspace: 100,
} as const;

/** Reads and checks the API's variables; throws ConfigError naming the first bad one. */
export function readApiConfig(env: Record<string, string | undefined> = process.env): ApiConfig {
  const common = readCommonConfig(env);
  return {
    ...common,
    port: readInt(env, 'PORT', API_DEFAULTS.port, { min: 0, max: 65_535 }),
    rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', API_DEFAULTS.rateLimitPerMinute, {
      min: 1,
      max: 1_000_000,
    }),
    rateLimitWindowMs: readInt(env, 'RATE_LIMIT_WINDOW_MS', API_DEFAULTS.rateLimitWindowMs, {
      min: 1_000,
      max: 3_600_000,
    }),
    unauthenticatedRateLimitPerMinute: readInt(
      env,
      'RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE',
      API_DEFAULTS.unauthenticatedRateLimitPerMinute,
      { min: 1, max: 1_000_000 },
    ),
    trustProxy: readTrustProxy(env),
    targetPolicy: readTargetPolicyConfig(env, common),
    metrics: readMetricsExposure(env),
    longPollMaxWaiters: readInt(env, 'LONG_POLL_MAX_WAITERS', API_DEFAULTS.longPollMaxWaiters, {
      min: 0,
      max: 100_000,
    }),
    longPollMaxWaitersPerWorkspace: readInt(
      env,
      'LONG_POLL_MAX_WAITERS_PER_WORKSPACE',
      API_DEFAULTS.longPollMaxWaitersPerWorkspace,
      { min: 0, max: 100_000 },
    ),
  };
}
