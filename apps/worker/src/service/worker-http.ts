import type { Redis } from 'ioredis';
import type { Db } from '@testrun/core/db';
import { jsonAnswer, startProbeServer, type ProbeServer } from '@testrun/core/probe-server';
import { withTimeout } from '@testrun/core/with-timeout';
import type { BrowserPool } from '../browser/browser-pool';
import type { WorkerMetrics } from './worker-metrics';

/** How long the browser, Postgres and Redis each get to answer a probe. */
const CHECK_TIMEOUT_MS = 2_000;

/** What the worker's HTTP server reports on. */
export type WorkerProbeSources = {
  metrics: WorkerMetrics;
  browser: Pick<BrowserPool, 'answers'>;
  db: Db;
  /** A connection of the worker's to the queue's Redis. */
  redis: Redis;
  /** True once the worker drains: it takes no more jobs, so it is no longer ready. */
  draining: () => boolean;
};

/** Postgres and Redis, each `ok` or `unreachable`. */
async function checkServices(db: Db, redis: Redis): Promise<{ postgres: string; redis: string }> {
  const [pg, rd] = await Promise.allSettled([
    withTimeout(db.$queryRaw`SELECT 1`, CHECK_TIMEOUT_MS, 'Postgres'),
    // A connection that is not up would only queue the PING until it is: unreachable now.
    redis.status === 'ready'
      ? withTimeout(redis.ping(), CHECK_TIMEOUT_MS, 'Redis')
      : Promise.reject(new Error(redis.status)),
  ]);
  return {
    postgres: pg.status === 'fulfilled' ? 'ok' : 'unreachable',
    redis: rd.status === 'fulfilled' ? 'ok' : 'unreachable',
  };
}

/**
 * The worker's HTTP server on WORKER_HTTP_PORT:
 * - `/metrics`: the worker's Prometheus metrics (docs/METRICS.md);
 * - `/healthz` (liveness): 200 while the event loop turns (it answers at all) and the browser
 *   answers a DevTools call; a browser being launched again counts as answering, so a relaunch
 *   never fails the probe; 503 for a hung browser;
 * - `/readyz` (readiness): 200 when Postgres and Redis answer, 503 naming which does not, or while
 *   the worker drains.
 */
export async function startWorkerHttp(
  sources: WorkerProbeSources,
  at: { port: number; host: string },
): Promise<ProbeServer> {
  const { metrics, browser, db, redis, draining } = sources;
  return startProbeServer(
    {
      '/metrics': async () => ({
        status: 200,
        contentType: metrics.registry.contentType,
        body: await metrics.registry.metrics(),
      }),
      '/healthz': async () =>
        (await browser.answers(CHECK_TIMEOUT_MS))
          ? jsonAnswer(200, { status: 'ok' })
          : jsonAnswer(503, { status: 'unhealthy', browser: 'unresponsive' }),
      '/readyz': async () => {
        const checks = await checkServices(db, redis);
        const ready = checks.postgres === 'ok' && checks.redis === 'ok' && !draining();
        return jsonAnswer(ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', draining: draining(), checks });
      },
    },
    at,
  );
}
