// `pnpm api`: reads the environment, connects, serves, and drains on SIGTERM/SIGINT.
import type { Server } from 'node:http';
import { createArtifactStore, describeArtifactStore } from '@testrun/core/artifact-store';
import { createPrisma } from '@testrun/core/db';
import { ConfigError } from '@testrun/core/env';
import { createLogger, type Logger } from '@testrun/core/logger';
import { startProbeServer, type ProbeServer } from '@testrun/core/probe-server';
import { createDiscoveryClient, createRedis, createRunQueue } from '@testrun/core/queue';
import { deriveKeys } from '@testrun/core/secrets';
import { broadAllowWarnings, resolveTargetPolicyConfig, systemLookup } from '@testrun/core/target-policy';
import { createApp } from './app';
import { readApiConfig, type ApiConfig } from './config';
import { errorMessage } from './errors';
import { ApiMetrics } from './metrics';
import { createApiRedis } from './redis';
import { createApiServer } from './server';
import { warmUp } from './services/health';
import { ChangeWatcher } from './services/long-poll';

/** How long in-flight requests get to finish after a stop signal before connections are cut. */
const DRAIN_TIMEOUT_MS = 10_000;

function loadConfig(): ApiConfig {
  try {
    return readApiConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`api: configuration error: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
}

/** With METRICS_PORT set, /metrics is served on a listener of its own instead of the API's port. */
async function serveMetricsApart(config: ApiConfig, metrics: ApiMetrics, logger: Logger): Promise<ProbeServer | null> {
  if (config.metrics.where !== 'port') return null;
  const { registry } = metrics;
  const served = await startProbeServer(
    { '/metrics': async () => ({ status: 200, contentType: registry.contentType, body: await registry.metrics() }) },
    config.metrics,
  );
  logger.info('metrics listening', { port: served.port, host: config.metrics.host });
  return served;
}

async function main(): Promise<void> {
  const loaded = loadConfig();
  // The enqueue check also knows the addresses the deployment's own host names resolve to now.
  const config = { ...loaded, targetPolicy: await resolveTargetPolicyConfig(loaded.targetPolicy) };
  const logger = createLogger({ service: 'api', level: config.logLevel });
  // The enqueue check reads TARGET_ALLOW too: a rule opening every service of an inside address is said here as well.
  for (const warning of await broadAllowWarnings(config.targetPolicy.allow, { lookup: systemLookup })) {
    logger.warn(warning);
  }
  const db = createPrisma({ databaseUrl: config.databaseUrl });
  const redis = createApiRedis(config.redisUrl, logger);
  const queue = createRunQueue(redis, config.redisPrefix);
  queue.on('error', (e: Error) => logger.warn('queue error', { error: e.message }));
  const discovery = createDiscoveryClient(() => createRedis(config.redisUrl), config.redisPrefix);
  const metrics = new ApiMetrics();
  const watcher = new ChangeWatcher(db, logger, config);
  const app = createApp({
    watcher,
    config,
    db,
    redis,
    queue,
    discover: discovery.discover,
    store: createArtifactStore(config.artifacts),
    keys: deriveKeys(config.secret),
    logger,
    metrics,
  });
  const metricsServer = await serveMetricsApart(config, metrics, logger);

  await warmUp(db, redis);
  const server: Server = createApiServer(app, logger);
  server.listen(config.port, () => {
    const address = server.address();
    logger.info('listening', {
      port: typeof address === 'object' && address ? address.port : config.port,
      artifacts: describeArtifactStore(config.artifacts),
    });
  });
  server.on('error', (e) => {
    logger.error('server error', { error: e.message });
    process.exit(1);
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping', { signal });
    const force = setTimeout(() => {
      logger.warn('drain timeout: closing remaining connections');
      server.closeAllConnections();
    }, DRAIN_TIMEOUT_MS);
    force.unref();
    // Stop accepting; idle keep-alive sockets close now, busy ones after their response.
    server.close(() => {
      clearTimeout(force);
      void Promise.allSettled([queue.close(), discovery.close(), db.$disconnect(), metricsServer?.close()]).then(() => {
        redis.disconnect();
        logger.info('stopped');
        process.exit(0);
      });
    });
    server.closeIdleConnections();
    // Long polls answer now with what they have; their clients poll again, reaching another replica.
    watcher.close();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((e: unknown) => {
  process.stderr.write(`api: failed to start: ${errorMessage(e)}\n`);
  process.exit(1);
});
