import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { addWebhookEndpoint } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { deriveKeys } from '@testrun/core/secrets';
import {
  applySampleProject,
  createTenant,
  insertSuiteRuns,
  sampleProject,
  testDb,
  testSecret,
} from '../support/harness';
import { present } from '../support/present';
import { stopProcess } from '../support/processes';
import { spawnService, waitForLog, waitUntil } from './support';

/**
 * One workspace's slow webhook endpoints must not delay another's events. Workspace A has five
 * endpoints that answer a byte a second and one that never answers, and several events for each;
 * workspace B has one fast endpoint. A real worker process delivers to real receivers on loopback.
 * The attempt timeout is long, so none of A's attempts can end before the test lets them: B's
 * event must be delivered while A's attempts are all still hanging. Then A's receivers let go:
 * every event of A is retried and delivered once, and no attempt was spent on waiting for a slot.
 */
jest.setTimeout(180_000);

const WORKER_ENV = {
  WORKER_CONCURRENCY: '1',
  WORKER_LOCK_DURATION_MS: '5000',
  WORKER_STALLED_INTERVAL_MS: '2000',
  WORKER_VIDEO: 'off',
  // Few slots, so A's endpoints could hold them all without the caps; half of them A's share.
  WEBHOOK_CONCURRENCY: '4',
  WEBHOOK_WORKSPACE_CONCURRENCY: '2',
  WEBHOOK_TIMEOUT_MS: '30000',
  WEBHOOK_RETRY_FIRST_DELAY_MS: '200',
  WEBHOOK_RETRY_MAX_DELAY_MS: '1000',
  WEBHOOK_RETRY_WINDOW_MS: '60000',
  WEBHOOK_RELAY_INTERVAL_MS: '200',
  WEBHOOK_SWEEP_INTERVAL_MS: '1000',
  LOG_LEVEL: 'info',
};

type Request = { id: string; path: string; timestamp: string; signature: string; body: string; status?: number };

/**
 * A receiver on 127.0.0.1. While `stalling`, `/drip…` answers 200 with a body sent a byte a second
 * and `/hang` never answers; `letGo` cuts those exchanges and every later request is answered 200.
 */
async function startReceiver() {
  const requests: Request[] = [];
  const open = new Set<ServerResponse>();
  const drips: NodeJS.Timeout[] = [];
  let stalling = true;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const header = (name: string) => String(req.headers[name] ?? '');
      const request: Request = {
        id: header('webhook-id'),
        path: req.url ?? '',
        timestamp: header('webhook-timestamp'),
        signature: header('webhook-signature'),
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      if (!stalling || !/^\/(drip|hang)/.test(request.path)) {
        request.status = 200;
        res.writeHead(200).end('ok');
        return;
      }
      open.add(res);
      res.on('close', () => open.delete(res));
      if (request.path.startsWith('/drip')) {
        res.writeHead(200, { 'content-length': '1000' });
        drips.push(setInterval(() => res.write('x'), 1_000));
      }
    });
  });
  const letGo = () => {
    stalling = false;
    for (const timer of drips) clearInterval(timer);
    for (const res of open) res.destroy();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    requests,
    /** Exchanges still hanging or dripping. */
    open: () => open.size,
    letGo,
    close: async () => {
      letGo();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let db: Db;
let slow: Awaited<ReturnType<typeof startReceiver>>;
let fast: Awaited<ReturnType<typeof startReceiver>>;
let worker: ReturnType<typeof spawnService> | undefined;

beforeAll(async () => {
  db = testDb();
  slow = await startReceiver();
  fast = await startReceiver();
});
afterAll(async () => {
  if (worker) await stopProcess(worker.child);
  await slow.close();
  await fast.close();
  await db.$disconnect();
});

/** A workspace whose suite `smoke` has `tests` disabled tests, with an endpoint at each URL. */
async function workspaceWithEndpoints(urls: readonly string[], tests: number) {
  const tenant = await createTenant(db);
  const project = await applySampleProject(
    db,
    tenant.workspace.id,
    sampleProject(`wf-${tenant.tag}`, { count: tests, disabled: tests }),
  );
  const key = deriveKeys(testSecret()).headers;
  const endpoints = [];
  for (const url of urls)
    endpoints.push(
      await addWebhookEndpoint(db, key, { workspaceId: tenant.workspace.id, url, events: ['run.finished'] }),
    );
  const suiteId = present(project.suites[0], 'suite').id;
  // Disabled tests: their runs are created skipped, and each sends run.finished at once.
  const emit = () => insertSuiteRuns(db, tenant.workspace.id, suiteId, { baseUrl: 'http://127.0.0.1:2' });
  return { workspaceId: tenant.workspace.id, endpoints, emit };
}

it("delivers workspace B's event while workspace A's slow endpoints hold their attempts, then A's events too", async () => {
  const a = await workspaceWithEndpoints(
    ['/drip1', '/drip2', '/drip3', '/drip4', '/drip5', '/hang'].map((p) => slow.url(p)),
    2,
  );
  const b = await workspaceWithEndpoints([fast.url('/hooks')], 1);
  worker = spawnService('worker', WORKER_ENV);
  await waitForLog(worker, 'worker ready');

  // A's twelve messages (two events for each of six endpoints) are handed out first, and hang.
  await a.emit();
  expect(await db.webhookMessage.count({ where: { workspaceId: a.workspaceId } })).toBe(12);
  await waitUntil(() => Promise.resolve(slow.open() >= 2));

  // B's event comes after: it is delivered while every attempt of A still hangs.
  await b.emit();
  const attemptsOfA = () => db.webhookAttempt.count({ where: { message: { workspaceId: a.workspaceId } } });
  await waitUntil(async () => fast.requests.length > 0 || (await attemptsOfA()) > 0);
  expect(fast.requests).toHaveLength(1);
  expect(await attemptsOfA()).toBe(0);
  expect(slow.open()).toBeGreaterThan(0);
  expect(slow.requests.every((r) => r.status === undefined)).toBe(true);
  const got = present(fast.requests[0], "B's delivery");
  const [bEndpoint] = b.endpoints;
  const headers = { 'webhook-id': got.id, 'webhook-timestamp': got.timestamp, 'webhook-signature': got.signature };
  expect(new Webhook(present(bEndpoint, 'endpoint').secret).verify(got.body, headers)).toMatchObject({
    event: 'run.finished',
  });
  await waitUntil(
    async () => (await db.webhookMessage.findUniqueOrThrow({ where: { id: got.id } })).state === 'delivered',
  );

  // A's receivers let go: the cut attempts fail and are retried, and every message is delivered once.
  slow.letGo();
  const messages = await waitUntil(async () => {
    const all = await db.webhookMessage.findMany({ where: { workspaceId: a.workspaceId }, include: { log: true } });
    return all.every((m) => m.state === 'delivered') ? all : undefined;
  });
  for (const m of messages) {
    const received = slow.requests.filter((r) => r.id === m.id);
    // Every attempt is a request the receiver got: waiting for a slot spent none.
    expect(received).toHaveLength(m.attempts);
    expect(m.log).toHaveLength(m.attempts);
    expect(received.filter((r) => r.status === 200)).toHaveLength(1);
    expect(present(received.at(-1), 'last request').status).toBe(200);
    // An attempt cut while it hung failed and was retried.
    if (received.length > 1) expect(m.log.find((l) => l.attempt === 1)?.error).not.toBeNull();
  }
  // Some were cut mid-attempt; all six endpoints got their events.
  expect(messages.some((m) => m.attempts > 1)).toBe(true);
  expect(new Set(slow.requests.map((r) => r.path)).size).toBe(6);
  expect(fast.requests).toHaveLength(1);
});
