import { createServer, type Server } from 'node:http';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { createLogger } from '@testrun/core/logger';
import { createRunQueue } from '@testrun/core/queue';
import { deriveKeys } from '@testrun/core/secrets';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import { createApp } from '../../apps/api/src/app';
import { readApiConfig } from '../../apps/api/src/config';
import { createApiRedis } from '../../apps/api/src/redis';

/** Options of {@link startApi}. */
export type TestApiOptions = {
  /** Default the local directory store at the configured ARTIFACTS_DIR. */
  store?: ArtifactStore;
  /** Default a JSON logger at LOG_LEVEL (default `error`) on stdout. */
  logger?: Logger;
  /** Settings on top of the process environment (VIEW_LINK_TTL_DAYS, say). */
  env?: Record<string, string>;
};

function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server is not listening on TCP');
  return address.port;
}

/**
 * The real API app (with the view mounted where the API mounts it) on a free port of 127.0.0.1.
 * The port is known before the app is built so PUBLIC_BASE_URL, and with it suiteRunUrl, points here.
 */
export async function startApi(db: Db, options: TestApiOptions = {}) {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${portOf(server)}`;
  const config = readApiConfig({ ...process.env, ...options.env, PUBLIC_BASE_URL: origin, PORT: '0' });
  const logger = options.logger ?? createLogger({ service: 'api-test', level: process.env.LOG_LEVEL ?? 'error' });
  const redis = createApiRedis(config.redisUrl, logger);
  const queue = createRunQueue(redis, config.redisPrefix);
  const store = options.store ?? new LocalArtifactStore(config.artifactsDir);
  const keys = deriveKeys(config.secret);
  const app = createApp({ config, db, redis, queue, store, keys, logger });
  server.on('request', app);
  return {
    origin,
    keys,
    store,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue.close();
      redis.disconnect();
    },
  };
}
