import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import type { BundleCaps } from '@testrun/contracts';
import { authChangeAnnouncer, type AuthChangeAnnouncer } from '@testrun/core/api-keys';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { createPrisma, type Db } from '@testrun/core/db';
import { createLogger } from '@testrun/core/logger';
import { createRunQueue, type Discover } from '@testrun/core/queue';
import { deriveKeys } from '@testrun/core/secrets';
import {
  createApiRedis,
  createApiServer,
  ChangeWatcher,
  createApp,
  readApiConfig,
  type ApiConfig,
  type ApiRedis,
} from '../../apps/api/src';
import { testDb, uniqueTag } from '../support/harness';

/** Log lines written by an app, for asserting what was (and was not) logged. */
type LogCapture = { lines: () => string[]; text: () => string };

export type TestApi = {
  app: ReturnType<typeof createApp>;
  db: Db;
  redis: ApiRedis;
  queue: ReturnType<typeof createRunQueue>;
  config: ApiConfig;
  /** Tells the API replicas on this app's prefix that a key's standing changed (as the admin commands do). */
  announce: AuthChangeAnnouncer;
  logs: LogCapture;
  /** Moves the idempotency clock. */
  clock: { offsetMs: number };
  /** The replica's long polls. */
  watcher: ChangeWatcher;
  close: () => Promise<void>;
};

/**
 * One API app on the jest run's database and Redis, with a Redis prefix of its own (`prefix`
 * defaults to a fresh one per call; pass the same to two apps to make them replicas).
 */
export function buildTestApi(
  options: {
    prefix?: string;
    env?: Record<string, string>;
    db?: Db;
    bundleMaxBytes?: number;
    bundleCaps?: BundleCaps;
    /** How the API lists a bundle's Playwright tests (none by default: a Playwright deployment is then a 503). */
    discover?: Discover;
  } = {},
): TestApi {
  const prefix = options.prefix ?? `${process.env.REDIS_PREFIX}-${uniqueTag()}`;
  const config = readApiConfig({
    ...process.env,
    PORT: '0',
    PUBLIC_BASE_URL: 'http://testrun.example',
    REDIS_PREFIX: prefix,
    ...options.env,
  });
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  const logger = createLogger({ service: 'api', level: 'info', stream });
  const ownDb = !options.db;
  const db =
    options.db ??
    (config.databaseUrl === process.env.DATABASE_URL
      ? testDb()
      : createPrisma({ databaseUrl: config.databaseUrl, max: 2 }));
  const redis = createApiRedis(config.redisUrl, logger);
  const queue = createRunQueue(redis, config.redisPrefix);
  queue.on('error', () => undefined);
  const clock = { offsetMs: 0 };
  const watcher = new ChangeWatcher(db, logger, config);
  const app = createApp({
    watcher,
    config,
    db,
    redis,
    queue,
    logger,
    store: new LocalArtifactStore(config.artifactsDir),
    keys: deriveKeys(config.secret),
    now: () => new Date(Date.now() + clock.offsetMs),
    bundleMaxBytes: options.bundleMaxBytes,
    bundleCaps: options.bundleCaps,
    discover: options.discover,
  });
  return {
    app,
    db,
    redis,
    queue,
    config,
    announce: authChangeAnnouncer(redis, config.redisPrefix),
    clock,
    watcher,
    logs: { lines: () => chunks.join('').split('\n').filter(Boolean), text: () => chunks.join('') },
    close: async () => {
      watcher.close();
      await queue.close().catch(() => undefined);
      redis.disconnect();
      if (ownDb) await db.$disconnect();
    },
  };
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** Ids of the queue's jobs in the given states (every state by default), sorted. */
export async function jobIdsIn(
  queue: TestApi['queue'],
  states: Parameters<TestApi['queue']['getJobs']>[0] = [
    'waiting',
    'active',
    'delayed',
    'prioritized',
    'completed',
    'failed',
  ],
): Promise<string[]> {
  const jobs = await queue.getJobs(states);
  return jobs.flatMap((j) => (j.id === undefined ? [] : [j.id])).sort();
}

/**
 * A test API behind the production HTTP server (`createApiServer`: its parse-error and CONNECT
 * answers, its timeouts) on a loopback port, for tests that speak raw bytes to it.
 */
export async function serveTestApi(): Promise<{
  api: TestApi;
  server: Server;
  port: number;
  close: () => Promise<void>;
}> {
  const api = buildTestApi();
  const server = createApiServer(api.app, createLogger({ service: 'api', level: 'error', stream: new PassThrough() }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    api,
    server,
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await api.close();
    },
  };
}
