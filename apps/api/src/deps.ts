import type { BundleCaps } from '@testrun/contracts';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import type { Discover, RunQueue } from '@testrun/core/queue';
import type { DerivedKeys } from '@testrun/core/secrets';
import type { ApiConfig } from './config';
import type { ApiMetrics } from './metrics';
import type { ApiRedis } from './redis';
import type { ChangeWatcher } from './services/long-poll';

/** Everything the API needs from outside; tests build these against the real Postgres and Redis. */
export type AppDeps = {
  config: ApiConfig;
  db: Db;
  /** Rate-limit counters; also the connection of `queue` in production. */
  redis: ApiRedis;
  /** The run queue the API adds jobs to (job id = run id). */
  queue: RunQueue;
  store: ArtifactStore;
  /** Asks a worker to list a Playwright bundle's tests (none: Playwright deployments answer 503). */
  discover?: Discover;
  keys: DerivedKeys;
  logger: Logger;
  /** The Prometheus metrics the app observes requests into (default a registry of the app's own). */
  metrics: ApiMetrics;
  /** The long polls (`Prefer: wait=N`) of this replica. */
  watcher: ChangeWatcher;
  /** The largest bundle PUT …/bundles/{digest} stores (default `BUNDLE_LIMITS.maxBytes`; tests lower it). */
  bundleMaxBytes: number;
  /** The unpacked caps a bundle is held to as it is received (default its workspace's plan's, BUNDLE_CAPS_BY_PLAN; tests lower them). */
  bundleCaps: BundleCaps | undefined;
  /** The clock of idempotency records (default the system clock); tests move it to expire keys. */
  now: () => Date;
};
