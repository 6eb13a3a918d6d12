import { execFileSync, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { createLogger, createPrisma, createRunQueue, deriveKeys, LocalArtifactStore, type Logger } from '@testrun/core';
import { createApp } from '../../apps/api/src/app';
import { readApiConfig } from '../../apps/api/src/config';
import { createApiRedis } from '../../apps/api/src/redis';

export { REPO_ROOT } from '../support/processes';

/** A logger whose lines are kept in memory, so a test can check what was (not) logged. */
export function memoryLogger(service: string): { logger: Logger; text: () => string } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  return { logger: createLogger({ service, level: 'debug', stream }), text: () => chunks.join('') };
}

/** The API in this process, on a free port, speaking real HTTP to Postgres and the given Redis. */
export async function startApi(env: Record<string, string> = {}) {
  const config = readApiConfig({ ...process.env, PORT: '0', RATE_LIMIT_PER_MINUTE: '100000', ...env });
  const { logger } = memoryLogger('api');
  const db = createPrisma({ databaseUrl: config.databaseUrl, max: 4 });
  const redis = createApiRedis(config.redisUrl, logger);
  const queue = createRunQueue(redis, config.redisPrefix);
  queue.on('error', () => undefined);
  const app = createApp({
    config,
    db,
    redis,
    queue,
    store: new LocalArtifactStore(config.artifactsDir),
    keys: deriveKeys(config.secret),
    logger,
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue.close().catch(() => undefined);
      redis.disconnect();
      await db.$disconnect();
    },
  };
}

/** A small HTTP client of the public API. */
export function apiClient(baseUrl: string, key: string) {
  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${p}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  return {
    createRuns: (body: unknown) => call('POST', '/api/v1/runs', body),
    getRun: (id: string) => call('GET', `/api/v1/runs/${id}`),
    getSuiteRun: (id: string) => call('GET', `/api/v1/suite-runs/${id}`),
    /** Polls a suite run until it is terminal (the jest timeout bounds the wait). */
    async waitSuiteRun(id: string) {
      for (;;) {
        const res = await call('GET', `/api/v1/suite-runs/${id}`);
        if (res.status !== 200) throw new Error(`GET suite run: ${res.status} ${JSON.stringify(res.body)}`);
        if (!['queued', 'running'].includes(res.body.status)) return res.body;
        await sleep(200);
      }
    },
    async waitRun(id: string) {
      for (;;) {
        const res = await call('GET', `/api/v1/runs/${id}`);
        if (res.status !== 200) throw new Error(`GET run: ${res.status} ${JSON.stringify(res.body)}`);
        if (!['queued', 'running'].includes(res.body.status)) return res.body;
        await sleep(200);
      }
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until `check` returns a value (not undefined/false); the jest timeout bounds the wait. */
export async function waitUntil<T>(check: () => Promise<T | undefined | false | null>, everyMs = 150): Promise<T> {
  for (;;) {
    const value = await check();
    if (value) return value;
    await sleep(everyMs);
  }
}

export { freePort, spawnService } from '../support/processes';

/** Waits for a JSON log line with this msg. */
export async function waitForLog(proc: { output: () => string; child: ChildProcess }, msg: string): Promise<void> {
  await waitUntil(async () => {
    if (proc.child.exitCode !== null)
      throw new Error(`process exited (${proc.child.exitCode}) before logging "${msg}":\n${proc.output()}`);
    return proc.output().includes(`"msg":"${msg}"`) || proc.output().includes(`"message":"${msg}"`);
  }, 100);
}

/** The names of the entries of a zip file (unzip must be installed, as it is on Debian). */
export function zipEntries(file: string): string[] {
  return execFileSync('unzip', ['-Z1', file]).toString('utf8').split('\n').filter(Boolean);
}

export function zipEntryText(file: string, entry: string): string {
  return execFileSync('unzip', ['-p', file, entry], { maxBuffer: 256 * 1024 * 1024 }).toString('utf8');
}
