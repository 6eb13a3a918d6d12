import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'bullmq';
import { JOBS, type DiscoveryJobPayload, type DiscoveryResult } from '@testrun/contracts';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { errorMessage, type Logger } from '@testrun/core/logger';
import { createRedis } from '@testrun/core/queue';
import type { WorkerConfig } from '../config';
import { Arrivals } from '../executors/playwright/batch/arrivals';
import { BatchRegistry } from '../executors/playwright/batch/batch';
import { Gatherings } from '../executors/playwright/batch/gather';
import { BundleCache, BundleRefusedError, BundleUnavailableError } from '../executors/playwright/caches/bundle-cache';
import { BundleCacheFullError } from '../executors/playwright/caches/bundle-cache-room';
import { CodeCache } from '../executors/playwright/caches/code-cache';
import { discoverTests } from '../executors/playwright/runner/discover';
import { scratchBytes, withScratch } from '../executors/playwright/runner/sandbox-scratch';
import type { PlaywrightRuntime } from '../executors/playwright/playwright-runtime';
import { VisualStore } from '../executors/playwright/store-visual';
import { servicePlaywright } from '../executors/playwright/runner/versions';
import { PlaywrightVersions } from '../executors/playwright/runner/versions';
import type { Isolation } from '../executors/playwright/runner/sandboxed-cli';
import type { WorkerEgress } from '../network/worker-egress';
import { makeScratchDir } from '../support/scratch-dir';
import { checkSandboxSupport, shareFolder } from '../sandbox';
import type { Lifecycle } from './lifecycle';

/**
 * The worker's Playwright runtime: the sandbox checked (and why not, said loudly), the extracted
 * bundles' cache, the egress proxy's socket for sandboxes, and the discovery jobs' worker.
 */
export async function startPlaywright(
  life: Lifecycle,
  config: WorkerConfig,
  logger: Logger,
  parts: { db: Db; store: ArtifactStore; egress: WorkerEgress; scratchDir: string },
): Promise<PlaywrightRuntime | undefined> {
  if (config.playwrightTests === 'off') {
    logger.info('PLAYWRIGHT_TESTS=off: Playwright runs end error and no discovery job is taken');
    return undefined;
  }
  const reason = await sandboxReason(config, logger);
  const runtime = await life.task('playwright runtime', async () => {
    // Named like a scratch directory: a worker killed before its tear-down leaves it to the next one's sweep.
    const dir = await makeScratchDir();
    const isolation = config.playwrightSandbox === 'off' ? 'none' : 'sandbox';
    // A sandbox's binds come from the worker's share (sandbox/share.ts): nothing of the host's layout shows inside.
    const shared = isolation === 'sandbox' && reason === null;
    const codeCache =
      config.playwrightCodeCache === 'off'
        ? undefined
        : await CodeCache.create(
            shared ? await shareFolder('code-cache', 0o755) : path.join(parts.scratchDir, 'code-cache'),
            servicePlaywright().playwright,
            (reason) =>
              logger.warn("the code cache of Playwright's modules cannot be made: each sandbox compiles them", {
                reason,
              }),
          );
    const value: PlaywrightRuntime = {
      bundles: new BundleCache(parts.store, path.join(dir, 'extracted'), {
        maxBytes: config.playwrightBundleCacheBytes,
      }),
      codeCache,
      versions: new PlaywrightVersions(config.playwrightVersionsDir),
      sandbox: reason === null ? { ok: true } : { ok: false, reason },
      isolation,
      egress: {
        port: Number(new URL(parts.egress.proxy.url).port),
        open: sandboxEgress(parts.egress, isolation),
      },
      limits: config.sandboxCpuCores === undefined ? {} : { cpuQuota: config.sandboxCpuCores },
      batches: new BatchRegistry(),
      batching: { share: config.concurrency, maxRuns: config.playwrightBatchSize },
      arrivals: new Arrivals(config.concurrency),
      gatherings: new Gatherings(),
      visual: new VisualStore(parts.db, parts.store),
    };
    const tearDown = () => {
      codeCache?.stop();
      return rm(dir, { recursive: true, force: true });
    };
    return { value, tearDown };
  });
  if (reason !== null) return runtime;
  await life.task('discovery worker', () => {
    const connection = createRedis(config.redisUrl);
    const value = new Worker<DiscoveryJobPayload, DiscoveryResult>(
      JOBS.discovery.queue,
      async (job) => discover(runtime, parts.scratchDir, job.data, logger),
      { connection, prefix: config.redisPrefix, concurrency: 1 },
    );
    value.on('failed', (job, error) =>
      logger.warn('discovery failed', { bundle: job?.data.bundle, error: errorMessage(error) }),
    );
    value.on('error', (error) => logger.warn('discovery worker error', { error: error.message }));
    return { value, tearDown: () => value.close().finally(() => connection.disconnect()) };
  });
  return runtime;
}

/**
 * Why this worker cannot run tenant code (null: it can), said at start: the sandbox's support, or
 * nothing when the operator opted out of the sandbox (PLAYWRIGHT_SANDBOX=off), said louder still.
 */
async function sandboxReason(config: WorkerConfig, logger: Logger): Promise<string | null> {
  if (config.playwrightSandbox === 'off') {
    logger.error(
      'PLAYWRIGHT_SANDBOX=off: teams\' Playwright code runs WITHOUT a sandbox, as this worker\'s user, able to read its files and reach its network; for a single-tenant install only (docs/SANDBOX.md, "Opting out")',
    );
    return null;
  }
  const reason = await checkSandboxSupport();
  if (reason !== null) logger.error('Playwright tests cannot run on this worker: it cannot sandbox them', { reason });
  return reason;
}

/** Listeners opened in the process's share (its worker services, one or more, share it). */
let opened = 0;

/**
 * How a sandbox gets its own listener of the egress proxy: a Unix socket in a folder of the
 * worker's share that only the worker reads (bound into that sandbox alone, where its relay dials
 * it; made with the first), or without a sandbox a port of loopback.
 */
function sandboxEgress(egress: WorkerEgress, isolation: Isolation): NonNullable<PlaywrightRuntime['egress']>['open'] {
  if (isolation === 'none') return (id, policy) => egress.proxy.openRunListener(id, { policy });
  // Short names: a Unix socket's path has at most 107 bytes.
  return async (id, policy) => {
    const socketPath = path.join(await shareFolder('egress', 0o700), `${++opened}.sock`);
    return egress.proxy.openRunListener(id, { policy, socketPath });
  };
}

/**
 * Why a bundle could not be extracted, as discovery's answer: the bundle's refusal (its `cause`
 * `bundle`), or the worker's (`worker`): its disk or cache full, or another fault, logged here with
 * its details, said without them (a host path is none of the tenant's business).
 */
function extractionFailure(error: unknown, logger: Logger): DiscoveryResult {
  if (error instanceof BundleRefusedError) return { error: error.message, cause: 'bundle' };
  if (error instanceof BundleUnavailableError) return { error: error.message };
  logger.warn('a bundle could not be extracted for discovery', { error: errorMessage(error) });
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return { error: "the worker's disk is full: the bundle could not be extracted", cause: 'worker' };
  if (error instanceof BundleCacheFullError) return { error: error.message, cause: 'worker' };
  return { error: 'the worker could not extract the bundle (its log says why)', cause: 'worker' };
}

/** One discovery job: the bundle extracted, then listed in a sandbox of its own. */
async function discover(
  runtime: PlaywrightRuntime,
  scratchRoot: string,
  job: DiscoveryJobPayload,
  logger: Logger,
): Promise<DiscoveryResult> {
  let bundleDir: string;
  try {
    bundleDir = await runtime.bundles.ensure(job.workspaceId, job.bundle);
  } catch (error) {
    return extractionFailure(error, logger);
  }
  return withScratch(
    scratchRoot,
    'discovery-',
    (scratchDir) =>
      discoverTests({
        bundleDir,
        configFile: job.config,
        scratchDir,
        limits: runtime.limits,
        isolation: runtime.isolation,
        transformCache: runtime.bundles.transformDir(bundleDir),
        codeCache: runtime.codeCache?.use(),
        versions: runtime.versions,
      }),
    scratchBytes(runtime),
  );
}
