import path from 'node:path';
import { ConfigError, readCommonConfig, readEnum, readInt, readString, type CommonConfig } from '@testrun/core/env';
import { readTargetPolicyConfig, type TargetPolicyConfig } from '@testrun/core/target-policy';
import type { BrowserNetworkIsolation } from './network/worker-egress';
import type { RetentionDays } from './housekeeping/retention';
import type { RunLimits } from './run/run-limits';
import type { WebhookRetryPolicy } from './webhooks/retry-schedule';

type Env = Record<string, string | undefined>;

/** Everything the worker process reads from its environment, read once at start. */
export type WorkerConfig = CommonConfig & {
  /** WORKER_CONCURRENCY: runs executed at once by this process (default 2). */
  concurrency: number;
  /** CHROMIUM_PATH: Chromium used when Playwright's own browser is not installed (default /usr/bin/chromium). */
  chromiumPath: string;
  /**
   * CHROMIUM_HEADLESS_SHELL_PATH: Chromium's headless shell, which the steps executor's headless
   * browser runs on when it exists, as Playwright's does (default
   * /usr/lib/chromium/chromium-headless-shell; `off`: always CHROMIUM_PATH). Null when off.
   */
  headlessShellPath: string | null;
  /**
   * WORKER_LOCK_DURATION_MS: how long a job's lock lives without renewal (default 30000). A worker
   * renews it every half of this while the run goes on; when the worker dies the lock expires and
   * the run is handed to another worker.
   */
  lockDurationMs: number;
  /**
   * WORKER_WRITE_RETRY_MS: how long a run's claim and result writes are tried again through a
   * Postgres or artifact store outage before the worker gives the run up (default 600000). Not
   * WORKER_LOCK_DURATION_MS: the lock lives in Redis and stays renewed through such an outage.
   */
  writeRetryMs: number;
  /** WORKER_STALLED_INTERVAL_MS: how often this worker looks for jobs whose lock expired (default 30000). */
  stalledIntervalMs: number;
  /** WORKER_DRAIN_TIMEOUT_MS: on SIGTERM, how long in-flight runs may take before they are handed back (default 25000). */
  drainTimeoutMs: number;
  /** RECONCILE_INTERVAL_MS: how often the reconciler looks for lost jobs and overdue runs (default 5000). */
  reconcileIntervalMs: number;
  /** RECONCILE_DEADLINE_GRACE_MS: how long past its deadline a running run may go before it is ended as timed out (default 30000). */
  deadlineGraceMs: number;
  /**
   * How long runs and their evidence are kept, in days, where a workspace sets none of its own.
   * ARTIFACT_RETENTION_DAYS: screenshots, traces and videos (default 30); RUN_RETENTION_DAYS: the
   * runs themselves, their steps and suite runs (default 90). See retention.ts.
   */
  retention: RetentionDays;
  /** WORKER_VIDEO: `auto` records video when ffmpeg is available, `on` requires it, `off` never (default auto). */
  video: 'auto' | 'on' | 'off';
  /** TARGET_ALLOW, TARGET_DENY and the protected endpoints: what runs may reach (docs/NETWORK_POLICY.md). */
  targetPolicy: TargetPolicyConfig;
  /**
   * BROWSER_NETWORK_ISOLATION: `on` runs Chromium in a network namespace whose only way out is the
   * egress proxy, and the worker does not start where that is impossible; `off` (an operator's
   * explicit choice, warned about at start) leaves non-HTTP traffic of pages unchecked (default on).
   */
  browserNetworkIsolation: BrowserNetworkIsolation;
  /**
   * PLAYWRIGHT_TESTS: `on` (the default) discovers and runs teams' Playwright tests, each in a sandbox
   * (docs/SANDBOX.md) — where the machine cannot sandbox, the worker says why at start and those runs
   * end `error`; `off` takes no discovery jobs and ends Playwright runs `error`.
   */
  playwrightTests: 'on' | 'off';
  /**
   * PLAYWRIGHT_BATCH_SIZE: most runs of a suite run one sandbox runs together (docs/PLAYWRIGHT.md,
   * "Batches"; default 100); 1 runs every test in a sandbox of its own.
   */
  playwrightBatchSize: number;
  /**
   * SANDBOX_CPU_CORES: the most cores one sandbox may use (its CFS quota; default: every core this
   * worker sees, so a sandbox borrows the cores the others leave idle, and concurrent sandboxes
   * share by equal weight). docs/SANDBOX.md, "Limits for a Playwright run".
   */
  sandboxCpuCores: number | undefined;
  /**
   * PLAYWRIGHT_SANDBOX: `on` (the default) runs tenant code only in the sandbox; `off` runs it
   * without one, for a single-tenant install whose machine cannot sandbox (docs/SANDBOX.md,
   * "Opting out"), logged at start as an error.
   */
  playwrightSandbox: 'on' | 'off';
  /**
   * PLAYWRIGHT_CODE_CACHE: `on` (the default) has every sandbox's processes compile the service's
   * Playwright from V8's code cache the worker makes (docs/PLAYWRIGHT.md, "Batches"); `off` compiles
   * it in each process, as `playwright test` does.
   */
  playwrightCodeCache: 'on' | 'off';
  /**
   * PLAYWRIGHT_BUNDLE_CACHE_MB: the most disk the extracted bundles take, with what Playwright
   * compiled of them (default 2048; at least 512, room for one bundle at BUNDLE_LIMITS' caps). The
   * least recently used go first (docs/WORKER.md, "Bundle cache").
   */
  playwrightBundleCacheBytes: number;
  /**
   * PLAYWRIGHT_VERSIONS_DIR: where the other @playwright/test versions a bundle may run on are
   * installed, one folder each (infra/playwright-versions.sh; default .cache/playwright-versions in
   * the repository). docs/PLAYWRIGHT.md, "Playwright versions".
   */
  playwrightVersionsDir: string;
  /**
   * What each run may use. WORKER_PAGE_HEAP_MB: JavaScript heap of one page (default 256);
   * WORKER_MAX_PAGES: pages a run may open, popups included (default 20); WORKER_MAX_DIALOGS:
   * dialogs a run may raise (default 50); WORKER_RECORDING_MAX_MB: largest trace or video kept, and
   * the bytes of a run's attachments (default 50); WORKER_ATTACHMENTS_MAX: attachments a run keeps
   * (default 50).
   */
  limits: RunLimits;
  /**
   * WORKER_HTTP_PORT: port of the worker's own HTTP server (/metrics, /healthz, /readyz; 0 picks a
   * free one). Default unset: no server, so several workers on one machine never clash; deployments
   * set it (the Kubernetes manifests use 9464). WORKER_HTTP_HOST: its bind address (default 0.0.0.0).
   */
  http: { port: number; host: string } | null;
  /** Webhook delivery (docs/WEBHOOKS.md). */
  webhooks: {
    /** WEBHOOK_CONCURRENCY: deliveries at once in this process (default 16; attempts wait on the network). */
    concurrency: number;
    /**
     * WEBHOOK_WORKSPACE_CONCURRENCY: deliveries of one workspace at once in this process (default a
     * quarter of WEBHOOK_CONCURRENCY, rounded up), so one workspace's slow endpoints leave slots to the others.
     */
    workspaceConcurrency: number;
    /** WEBHOOK_ENDPOINT_CONCURRENCY: deliveries to one endpoint at once (default 2; 1 while it times out). */
    endpointConcurrency: number;
    /** WEBHOOK_TIMEOUT_MS: the longest one attempt may take, connection to answer (default 10000). */
    timeoutMs: number;
    /** WEBHOOK_RETRY_FIRST_DELAY_MS, WEBHOOK_RETRY_MAX_DELAY_MS, WEBHOOK_RETRY_WINDOW_MS: the retry schedule. */
    retry: WebhookRetryPolicy;
    /** WEBHOOK_RELAY_INTERVAL_MS: how often new events are handed from the outbox to the queue (default 1000). */
    relayIntervalMs: number;
    /** WEBHOOK_SWEEP_INTERVAL_MS: how often every pending event is handed again, for jobs Redis lost (default 60000). */
    sweepIntervalMs: number;
  };
};

const HOUR = 3_600_000;

const MB = 1024 * 1024;

/** The repository's .cache/playwright-versions (this file is apps/worker/src or dist/config). */
const DEFAULT_VERSIONS_DIR = path.resolve(__dirname, '../../../.cache/playwright-versions');

/** CHROMIUM_HEADLESS_SHELL_PATH: a path, or null for `off`. */
function readHeadlessShell(env: Env): string | null {
  const value = readString(env, 'CHROMIUM_HEADLESS_SHELL_PATH', '/usr/lib/chromium/chromium-headless-shell');
  return value === 'off' ? null : value;
}

export function readWorkerConfig(env: Env = process.env): WorkerConfig {
  const common = readCommonConfig(env);
  const lockDurationMs = readInt(env, 'WORKER_LOCK_DURATION_MS', 30_000, { min: 1_000, max: 600_000 });
  const webhookConcurrency = readInt(env, 'WEBHOOK_CONCURRENCY', 16, { min: 1, max: 256 });
  const config: WorkerConfig = {
    ...common,
    concurrency: readInt(env, 'WORKER_CONCURRENCY', 2, { min: 1, max: 64 }),
    chromiumPath: readString(env, 'CHROMIUM_PATH', '/usr/bin/chromium'),
    headlessShellPath: readHeadlessShell(env),
    lockDurationMs,
    writeRetryMs: readInt(env, 'WORKER_WRITE_RETRY_MS', 600_000, { min: 1_000, max: 86_400_000 }),
    stalledIntervalMs: readInt(env, 'WORKER_STALLED_INTERVAL_MS', 30_000, { min: 500, max: 600_000 }),
    drainTimeoutMs: readInt(env, 'WORKER_DRAIN_TIMEOUT_MS', 25_000, { min: 0, max: 3_600_000 }),
    reconcileIntervalMs: readInt(env, 'RECONCILE_INTERVAL_MS', 5_000, { min: 200, max: 3_600_000 }),
    deadlineGraceMs: readInt(env, 'RECONCILE_DEADLINE_GRACE_MS', 30_000, { min: 0, max: 3_600_000 }),
    retention: {
      artifactDays: readInt(env, 'ARTIFACT_RETENTION_DAYS', 30, { min: 1, max: 36_500 }),
      runDays: readInt(env, 'RUN_RETENTION_DAYS', 90, { min: 1, max: 36_500 }),
    },
    video: readEnum(env, 'WORKER_VIDEO', ['auto', 'on', 'off'] as const, 'auto'),
    targetPolicy: readTargetPolicyConfig(env, common),
    browserNetworkIsolation: readEnum(env, 'BROWSER_NETWORK_ISOLATION', ['on', 'off'] as const, 'on'),
    playwrightTests: readEnum(env, 'PLAYWRIGHT_TESTS', ['on', 'off'] as const, 'on'),
    playwrightBatchSize: readInt(env, 'PLAYWRIGHT_BATCH_SIZE', 100, { min: 1, max: 1_000 }),
    sandboxCpuCores: env.SANDBOX_CPU_CORES ? readInt(env, 'SANDBOX_CPU_CORES', 1, { min: 1, max: 1_024 }) : undefined,
    playwrightSandbox: readEnum(env, 'PLAYWRIGHT_SANDBOX', ['on', 'off'] as const, 'on'),
    playwrightCodeCache: readEnum(env, 'PLAYWRIGHT_CODE_CACHE', ['on', 'off'] as const, 'on'),
    playwrightBundleCacheBytes: readInt(env, 'PLAYWRIGHT_BUNDLE_CACHE_MB', 2048, { min: 512, max: 1_048_576 }) * MB,
    playwrightVersionsDir: readString(env, 'PLAYWRIGHT_VERSIONS_DIR', DEFAULT_VERSIONS_DIR),
    limits: {
      heapBytes: readInt(env, 'WORKER_PAGE_HEAP_MB', 256, { min: 16, max: 16_384 }) * MB,
      maxPages: readInt(env, 'WORKER_MAX_PAGES', 20, { min: 1, max: 1_000 }),
      maxDialogs: readInt(env, 'WORKER_MAX_DIALOGS', 50, { min: 0, max: 100_000 }),
      maxRecordingBytes: readInt(env, 'WORKER_RECORDING_MAX_MB', 50, { min: 1, max: 10_240 }) * MB,
      maxAttachments: readInt(env, 'WORKER_ATTACHMENTS_MAX', 50, { min: 0, max: 10_000 }),
    },
    http: null,
    webhooks: {
      concurrency: webhookConcurrency,
      workspaceConcurrency: readInt(env, 'WEBHOOK_WORKSPACE_CONCURRENCY', Math.ceil(webhookConcurrency / 4), {
        min: 1,
        max: 256,
      }),
      endpointConcurrency: readInt(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 2, { min: 1, max: 256 }),
      timeoutMs: readInt(env, 'WEBHOOK_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
      retry: {
        firstDelayMs: readInt(env, 'WEBHOOK_RETRY_FIRST_DELAY_MS', 10_000, { min: 10, max: 24 * HOUR }),
        maxDelayMs: readInt(env, 'WEBHOOK_RETRY_MAX_DELAY_MS', 4 * HOUR, { min: 10, max: 24 * HOUR }),
        windowMs: readInt(env, 'WEBHOOK_RETRY_WINDOW_MS', 24 * HOUR, { min: 0, max: 30 * 24 * HOUR }),
      },
      relayIntervalMs: readInt(env, 'WEBHOOK_RELAY_INTERVAL_MS', 1_000, { min: 50, max: 600_000 }),
      sweepIntervalMs: readInt(env, 'WEBHOOK_SWEEP_INTERVAL_MS', 60_000, { min: 100, max: 3_600_000 }),
    },
  };
  const httpPort = env.WORKER_HTTP_PORT?.trim();
  if (httpPort) {
    config.http = {
      port: readInt(env, 'WORKER_HTTP_PORT', 0, { min: 0, max: 65_535 }),
      host: readString(env, 'WORKER_HTTP_HOST', '0.0.0.0'),
    };
  }
  if (config.headlessShellPath !== null && !config.headlessShellPath.startsWith('/'))
    throw new ConfigError(
      `CHROMIUM_HEADLESS_SHELL_PATH must be an absolute path or off, got "${config.headlessShellPath}"`,
    );
  if (!config.chromiumPath.startsWith('/'))
    throw new ConfigError(`CHROMIUM_PATH must be an absolute path, got "${config.chromiumPath}"`);
  return config;
}
