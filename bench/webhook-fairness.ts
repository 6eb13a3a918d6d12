/**
 * `pnpm bench webhook-fairness`: how long workspace B's webhook event takes, from the statement that
 * creates it to its receipt, while workspace A's endpoints answer a byte a second or never; rewrites
 * the `webhook-fairness` section of docs/BENCHMARKS.md. A real worker service in this process (its
 * own Redis prefix, the development database with workspaces of its own, deleted afterwards) sends to
 * real receivers on loopback. Three kinds of round, alternating: B alone; B under A's load with the
 * per-workspace and per-endpoint caps; B under the same load with the caps as wide as the slots, as
 * every delivery was shared before them.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addWebhookEndpoint, applyProject, createWorkspace } from '../packages/admin/src/operations';
import { createPrisma, type Db } from '@testrun/core/db';
import { readCommonConfig } from '@testrun/core/env';
import { createLogger } from '@testrun/core/logger';
import { ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { insertRuns, type PlannedTest } from '@testrun/core/runs';
import { deriveKeys } from '@testrun/core/secrets';
import { readWorkerConfig, startWorkerService } from '@testrun/worker';
import { first, machineLine, spread, writeSection } from './report';
import { testTargetAllow } from '../test/support/processes';

const ROUNDS = Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 5);
/** Slots of the worker (WEBHOOK_CONCURRENCY; few, so A's endpoints could fill them all) and A's events per round. */
const SLOTS = 4;
const A_RUNS = 2;
const A_PATHS = ['/drip1', '/drip2', '/drip3', '/drip4', '/drip5', '/hang'];
const RELAY_MS = 200;

type Mode = 'alone' | 'capped' | 'uncapped';
const MODES: readonly Mode[] = ['alone', 'capped', 'uncapped'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const out = (line: string) => process.stdout.write(`${line}\n`);

/** A's receiver: `/drip…` answers 200 and a byte a second, `/hang` never, until `letGo` (then 200 at once). */
async function startSlowReceiver() {
  const open = new Set<ServerResponse>();
  let stalling = true;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (!stalling) return void res.writeHead(200).end();
      open.add(res);
      const timer = req.url?.startsWith('/drip')
        ? (res.writeHead(200, { 'content-length': '1000' }), setInterval(() => res.write('x'), 1_000))
        : undefined;
      res.on('close', () => {
        clearInterval(timer);
        open.delete(res);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    urls: A_PATHS.map((p) => `${base}${p}`),
    open: () => open.size,
    stall: () => (stalling = true),
    letGo: () => {
      stalling = false;
      for (const res of open) res.destroy();
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** B's receiver: answers 204 at once and tells when a request came. */
async function startFastReceiver() {
  let onRequest: () => void = () => undefined;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(204).end();
      onRequest();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    next: () => new Promise<number>((resolve) => (onRequest = () => resolve(performance.now()))),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A workspace with one disabled test (its runs are created `skipped`, each sends `run.finished`). */
async function workspaceWithEndpoints(db: Db, secret: string, name: string, urls: readonly string[]) {
  const workspace = await createWorkspace(db, { name, plan: 'enterprise' });
  const project = await applyProject(db, workspace.id, {
    slug: 'hooks',
    name: 'Hooks',
    baseUrl: 'http://127.0.0.1:2',
    suites: [
      { slug: 's', name: 'S', tests: [{ key: 't', name: 'T', enabled: false, steps: [{ action: 'goto', url: '/' }] }] },
    ],
  });
  const testId = first(first(project.suites, 'suite').tests, 'test').id;
  const test: PlannedTest = { id: testId, enabled: false, baseUrl: 'http://127.0.0.1:2' };
  const key = deriveKeys(secret).headers;
  for (const url of urls)
    await addWebhookEndpoint(db, key, { workspaceId: workspace.id, url, events: ['run.finished'] });
  const emit = (count: number) =>
    db.$transaction((tx) =>
      insertRuns(tx, {
        workspaceId: workspace.id,
        suiteId: null,
        tests: Array.from({ length: count }, () => test),
        headersKey: Buffer.alloc(32),
      }),
    );
  return { workspaceId: workspace.id, emit };
}

type Setup = {
  db: Db;
  env: NodeJS.ProcessEnv;
  slow: Awaited<ReturnType<typeof startSlowReceiver>>;
  fast: Awaited<ReturnType<typeof startFastReceiver>>;
  a: Awaited<ReturnType<typeof workspaceWithEndpoints>>;
  b: Awaited<ReturnType<typeof workspaceWithEndpoints>>;
};

/** One round: a worker service with the mode's caps; A's load unless alone; B's one event. B's delay in ms. */
async function round(setup: Setup, mode: Mode): Promise<number> {
  const { db, slow, fast, a, b } = setup;
  const caps =
    mode === 'uncapped' ? { WEBHOOK_WORKSPACE_CONCURRENCY: `${SLOTS}`, WEBHOOK_ENDPOINT_CONCURRENCY: `${SLOTS}` } : {};
  const service = await startWorkerService(readWorkerConfig({ ...setup.env, ...caps }), {
    logger: createLogger({ service: 'bench-worker', level: 'error' }),
    reconcile: false,
  });
  if (mode !== 'alone') {
    slow.stall();
    await a.emit(A_RUNS);
    // A's attempts hold what slots they may (two with the caps, all four without) before B's event.
    const held = mode === 'capped' ? Math.ceil(SLOTS / 2) : SLOTS;
    while (slow.open() < held) await sleep(10);
    await sleep(RELAY_MS);
  }
  const received = fast.next();
  const created = performance.now();
  await b.emit(1);
  const delay = (await received) - created;
  // A's receivers let go: every message of A is delivered before the next round.
  slow.letGo();
  for (;;) {
    const pending = await db.webhookMessage.count({ where: { workspaceId: a.workspaceId, state: 'pending' } });
    if (pending === 0) break;
    await sleep(50);
  }
  await service.stop();
  return Math.round(delay);
}

/** Alternates the three kinds of round; rewrites the `webhook-fairness` section. */
export async function run(): Promise<void> {
  const prefix = `${process.env.REDIS_PREFIX ?? 'testrun'}-bench-webhooks-${randomBytes(3).toString('hex')}`;
  const env = {
    ...process.env,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'error',
    TARGET_ALLOW: process.env.TARGET_ALLOW ?? testTargetAllow(),
    WORKER_VIDEO: 'off',
    WEBHOOK_CONCURRENCY: `${SLOTS}`,
    WEBHOOK_WORKSPACE_CONCURRENCY: `${SLOTS / 2}`,
    WEBHOOK_RELAY_INTERVAL_MS: `${RELAY_MS}`,
    WEBHOOK_RETRY_FIRST_DELAY_MS: '100',
    WEBHOOK_RETRY_MAX_DELAY_MS: '1000',
  };
  const common = readCommonConfig(env);
  await ensureDatabase(common.databaseUrl);
  await migrateDatabase(common.databaseUrl);
  const db = createPrisma({ databaseUrl: common.databaseUrl, max: 4 });
  const slow = await startSlowReceiver();
  const fast = await startFastReceiver();
  const a = await workspaceWithEndpoints(db, common.secret, 'bench-webhooks-a', slow.urls);
  const b = await workspaceWithEndpoints(db, common.secret, 'bench-webhooks-b', [fast.url]);
  const delays: Record<Mode, number[]> = { alone: [], capped: [], uncapped: [] };
  try {
    for (let i = 0; i < ROUNDS; i++) {
      for (const mode of MODES) {
        const delay = await round({ db, env, slow, fast, a, b }, mode);
        delays[mode].push(delay);
        out(`${mode} round ${i + 1}: B's event received after ${delay} ms`);
      }
    }
  } finally {
    await db.workspace.deleteMany({ where: { id: { in: [a.workspaceId, b.workspaceId] } } });
    await db.$disconnect();
    await slow.close();
    await fast.close();
  }
  const line = (mode: Mode, label: string) => {
    const s = spread(delays[mode]);
    return `| ${label} | ${s.median} ms | ${s.min}–${s.max} ms |`;
  };
  writeSection(
    'webhook-fairness',
    `## Webhook deliveries between workspaces

\`pnpm bench webhook-fairness\`: workspace B's one \`run.finished\` event, from the statement that
creates it to its receipt by B's endpoint on loopback, while workspace A's six endpoints (five that
answer a byte a second, one that never answers) hold their attempts for ${A_RUNS} events each. One
worker service, ${SLOTS} webhook slots (\`WEBHOOK_CONCURRENCY=${SLOTS}\`, \`WEBHOOK_WORKSPACE_CONCURRENCY=${SLOTS / 2}\`), the default 10 s attempt
timeout, \`WEBHOOK_RELAY_INTERVAL_MS=${RELAY_MS}\` (the default 1000 adds up to 800 ms to every row
alike). ${ROUNDS} rounds of each kind, alternating; A's events are all delivered between rounds.

| B's event | median | spread |
|---|---|---|
${line('alone', 'alone (no load from A)')}
${line('capped', "under A's load, per-workspace and per-endpoint caps (default)")}
${line('uncapped', "under A's load, caps as wide as the slots (as before them)")}

With the caps A holds at most ${Math.ceil(SLOTS / 2)} of the ${SLOTS} slots, so B's event is sent at once,
as it would be alone: both rows are mostly the relay's wait for its next pass. Without the caps A
holds every slot and B waits for A's attempts to time out.

Machine: ${machineLine()}.`,
  );
}
