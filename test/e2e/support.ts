import { execFileSync, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import {
  compileValidator,
  Run,
  SingleRunCreated,
  SuiteRun,
  SuiteRunCreated,
  type RunCreateRequest,
  type RunStatus,
  type Validation,
} from '@testrun/contracts';
import { createArtifactStore } from '@testrun/core/artifact-store';
import { createPrisma } from '@testrun/core/db';
import { createLogger, type Logger } from '@testrun/core/logger';
import { createDiscoveryClient, createRedis, createRunQueue } from '@testrun/core/queue';
import { deriveKeys } from '@testrun/core/secrets';
import { createApp } from '../../apps/api/src/app';
import { readApiConfig } from '../../apps/api/src/config';
import { createApiRedis } from '../../apps/api/src/redis';

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
  const store = createArtifactStore(config.artifacts);
  const discovery = createDiscoveryClient(() => createRedis(config.redisUrl), config.redisPrefix);
  const app = createApp({
    config,
    db,
    redis,
    queue,
    store,
    discover: discovery.discover,
    keys: deriveKeys(config.secret),
    logger,
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(config.port, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue.close().catch(() => undefined);
      await discovery.close();
      redis.disconnect();
      await db.$disconnect();
    },
  };
}

const checkRun = compileValidator(Run);
const checkSuiteRun = compileValidator(SuiteRun);
const checkSingleRunCreated = compileValidator(SingleRunCreated);
const checkSuiteRunCreated = compileValidator(SuiteRunCreated);

/** A reply's body as its contract's type; a reply off the contract (or an error status) fails the test here. */
function bodyOf<T>(
  check: (value: unknown) => Validation<T>,
  reply: { status: number; body: unknown },
  what: string,
): T {
  const checked = check(reply.body);
  if (reply.status >= 300 || !checked.ok)
    throw new Error(`${what}: HTTP ${reply.status} ${JSON.stringify(reply.body)} is not the contract's answer`);
  return checked.value;
}

/** Reads until what it reads is no longer queued or running. */
async function untilTerminal<T extends { status: RunStatus }>(read: () => Promise<T>): Promise<T> {
  for (;;) {
    const value = await read();
    if (value.status !== 'queued' && value.status !== 'running') return value;
    await sleep(200);
  }
}

/** A small HTTP client of the public API whose answers are checked against contracts and typed. */
export function apiClient(baseUrl: string, key: string) {
  const call = async (method: string, p: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(`${baseUrl}${p}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
  };
  const getRun = async (id: string) => bodyOf(checkRun, await call('GET', `/api/v1/runs/${id}`), 'GET run');
  const getSuiteRun = async (id: string) =>
    bodyOf(checkSuiteRun, await call('GET', `/api/v1/suite-runs/${id}`), 'GET suite run');
  return {
    /** Creates the run of one test; its id. */
    createRun: async (body: RunCreateRequest) =>
      bodyOf(checkSingleRunCreated, await call('POST', '/api/v1/runs', body), 'POST runs').runId,
    /** Creates the run of a suite; its id. */
    createSuiteRun: async (body: RunCreateRequest) =>
      bodyOf(checkSuiteRunCreated, await call('POST', '/api/v1/runs', body), 'POST runs').suiteRunId,
    getRun,
    getSuiteRun,
    /** Polls a suite run until it is terminal (the jest timeout bounds the wait). */
    waitSuiteRun: (id: string) => untilTerminal(() => getSuiteRun(id)),
    /** Polls a run until it is terminal (the jest timeout bounds the wait). */
    waitRun: (id: string) => untilTerminal(() => getRun(id)),
  };
}

function sleep(ms: number): Promise<void> {
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
  await waitUntil(() => {
    if (proc.child.exitCode !== null)
      throw new Error(`process exited (${proc.child.exitCode}) before logging "${msg}":\n${proc.output()}`);
    return Promise.resolve(proc.output().includes(`"msg":"${msg}"`) || proc.output().includes(`"message":"${msg}"`));
  }, 100);
}

/** The names of the entries of a zip file (unzip must be installed, as it is on Debian). */
export function zipEntries(file: string): string[] {
  return execFileSync('unzip', ['-Z1', file]).toString('utf8').split('\n').filter(Boolean);
}

export function zipEntryText(file: string, entry: string): string {
  return execFileSync('unzip', ['-p', file, entry], { maxBuffer: 256 * 1024 * 1024 }).toString('utf8');
}
