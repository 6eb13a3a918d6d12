import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { applyProject, type AppliedProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import type {
  WebhookDeliveriesOutput,
  WebhookListOutput,
  WebhookSecretOutput,
} from '../../packages/admin/src/webhook-commands';
import { createTenant, testDb } from '../support/harness';
import { present } from '../support/present';
import { runAdmin } from '../support/admin';
import { stopProcess } from '../support/processes';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { apiClient, spawnService, startApi, waitForLog, waitUntil } from './support';

/**
 * Webhooks end to end: real worker processes deliver to a real HTTP receiver on loopback, which
 * verifies every signature with the Standard Webhooks library; endpoints are managed with the
 * operator's `testrun admin webhook …`. Retry waits and lock intervals are shortened through the
 * environment so a retry or a dead worker is noticed in about a second.
 */
jest.setTimeout(120_000);

const PUBLIC_BASE_URL = 'http://testrun.test';
const WORKER_ENV = {
  WORKER_CONCURRENCY: '2',
  WORKER_LOCK_DURATION_MS: '2000',
  WORKER_STALLED_INTERVAL_MS: '1000',
  WORKER_VIDEO: 'off',
  WEBHOOK_RETRY_FIRST_DELAY_MS: '200',
  WEBHOOK_RETRY_MAX_DELAY_MS: '1000',
  WEBHOOK_RETRY_WINDOW_MS: '60000',
  WEBHOOK_RELAY_INTERVAL_MS: '200',
  WEBHOOK_SWEEP_INTERVAL_MS: '1000',
  PUBLIC_BASE_URL,
  LOG_LEVEL: 'info',
};

type Received = { id: string; timestamp: string; signature: string; body: string; answered: number | 'hung' };
/** What the receiver answers to the `nth` (1-based) request carrying message `id`. */
type Answer = (id: string, nth: number) => number | 'hang';

/** An HTTP receiver on 127.0.0.1 that records every request and answers as `answer` says. */
async function startReceiver() {
  const received: Received[] = [];
  const hung: ServerResponse[] = [];
  let answer: Answer = () => 200;
  let onHang: () => void = () => undefined;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const header = (name: string) => String(req.headers[name] ?? '');
      const id = header('webhook-id');
      const nth = received.filter((r) => r.id === id).length + 1;
      const reply = answer(id, nth);
      received.push({
        id,
        timestamp: header('webhook-timestamp'),
        signature: header('webhook-signature'),
        body: Buffer.concat(chunks).toString('utf8'),
        answered: reply === 'hang' ? 'hung' : reply,
      });
      if (reply === 'hang') {
        hung.push(res);
        onHang();
        return;
      }
      res.writeHead(reply, { 'content-type': 'text/plain' }).end(reply < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    answerWith(next: Answer, hang: () => void = () => undefined) {
      answer = next;
      onHang = hang;
    },
    close: async () => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runs `testrun admin …` in this process against the test database (test/support/admin.ts). */
const admin = (...args: string[]) => runAdmin(args);

async function adminJson<T>(...args: string[]): Promise<T> {
  const result = await admin(...args, '--json');
  if (result.code !== 0) throw new Error(`testrun admin ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

let db: Db;
let site: FixtureSite;
let api: Awaited<ReturnType<typeof startApi>>;
let client: ReturnType<typeof apiClient>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let project: AppliedProject;
let workspaceId = '';
let endpoint: WebhookSecretOutput;
const children: ChildProcess[] = [];

function startWorker() {
  const proc = spawnService('worker', WORKER_ENV);
  children.push(proc.child);
  return proc;
}

function testId(key: string): string {
  return present(
    project.suites.flatMap((s) => s.tests).find((t) => t.key === key),
    `test ${key}`,
  ).id;
}

/** The requests received for message `id`, once `count` of them have come. */
function requestsOf(id: string, count: number): Promise<Received[]> {
  return waitUntil(() => {
    const got = receiver.received.filter((r) => r.id === id);
    return Promise.resolve(got.length >= count ? got : undefined);
  });
}

/** The messages of the outbox for a run or suite run. */
function messagesOf(resourceId: string) {
  return db.webhookMessage.findMany({ where: { resourceId }, orderBy: { createdAt: 'asc' } });
}

beforeAll(async () => {
  db = testDb();
  site = await startFixtureSite();
  receiver = await startReceiver();
  api = await startApi({ PUBLIC_BASE_URL });
  const tenant = await createTenant(db);
  workspaceId = tenant.workspace.id;
  client = apiClient(api.url, tenant.key);
  const home = [{ action: 'goto' as const, url: '/' }];
  project = await applyProject(db, workspaceId, {
    slug: 'hooks',
    name: 'Hooks',
    baseUrl: site.url,
    suites: [
      {
        slug: 'main',
        name: 'Main',
        tests: [
          {
            key: 'slow-pass',
            name: 'Passes after a second',
            steps: [
              ...home,
              { action: 'wait', ms: 1_500 },
              { action: 'expectText', selector: 'h1', text: 'Testrun Shop' },
            ],
          },
          { key: 'off', name: 'Disabled', enabled: false, steps: home },
        ],
      },
      { slug: 'single', name: 'Single', tests: [{ key: 'quick', name: 'Quick', steps: home }] },
    ],
  });
  endpoint = await adminJson<WebhookSecretOutput>('webhook', 'add', '--workspace', workspaceId, '--url', receiver.url);
});

afterAll(async () => {
  for (const child of children) await stopProcess(child);
  await receiver.close();
  await api.close();
  await site.close();
  await db.$disconnect();
});

describe('webhooks', () => {
  it('refuses at add a URL the target network policy forbids, and stores nothing', async () => {
    const before = await db.webhookEndpoint.count({ where: { workspaceId } });
    // A private address: checked from the URL alone, never dialled.
    const refused = await admin('webhook', 'add', '--workspace', workspaceId, '--url', 'http://10.1.2.3/hooks');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('not allowed by the target network policy');
    const badEvent = await admin(
      'webhook',
      'add',
      '--workspace',
      workspaceId,
      '--url',
      receiver.url,
      '--events',
      'run.started',
    );
    expect(badEvent.code).toBe(1);
    expect(badEvent.stderr).toContain('unknown event run.started');
    // The same holds for a project file's webhooks.
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'hooks-')), 'project.json');
    const webhooks = [{ url: receiver.url }, { url: 'http://169.254.169.254/hooks' }];
    writeFileSync(file, JSON.stringify({ slug: 'blocked', name: 'Blocked', baseUrl: site.url, suites: [], webhooks }));
    const applied = await admin('project', 'apply', '--workspace', workspaceId, '--file', file);
    rmSync(path.dirname(file), { recursive: true, force: true });
    expect(applied.code).toBe(1);
    expect(applied.stderr).toContain('/webhooks/1/url');
    expect(await db.project.count({ where: { workspaceId, slug: 'blocked' } })).toBe(0);
    expect(await db.webhookEndpoint.count({ where: { workspaceId } })).toBe(before);
    // The secret is shown at add only: never by list.
    const listed = await admin('webhook', 'list', '--workspace', workspaceId, '--json');
    expect((JSON.parse(listed.stdout) as WebhookListOutput).endpoints.map((e) => e.id)).toEqual([endpoint.id]);
    expect(listed.stdout).not.toContain(endpoint.secret);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
  });

  it('sends each finished run and suite run once, signed, with the same webhook-id and body on the third try after two 500s', async () => {
    const worker = startWorker();
    await waitForLog(worker, 'worker ready');
    receiver.answerWith((_id, nth) => (nth <= 2 ? 500 : 200));
    const suiteRunId = await client.createSuiteRun({ projectSlug: 'hooks', suiteSlug: 'main' });
    const created = await client.getSuiteRun(suiteRunId);
    const [slowRunId, skippedRunId] = created.tests.map((t) => t.runId);

    // While the slow run is running, nothing about it or its suite run is in the outbox or sent.
    await waitUntil(async () => (await client.getRun(present(slowRunId, 'slow run'))).status === 'running');
    expect(await messagesOf(present(slowRunId, 'slow run'))).toEqual([]);
    expect(await messagesOf(suiteRunId)).toEqual([]);
    const suiteRun = await client.waitSuiteRun(suiteRunId);
    expect(suiteRun.status).toBe('passed');

    const expected = [
      {
        resourceId: present(slowRunId, 'slow run'),
        event: 'run.finished',
        get: () => client.getRun(present(slowRunId, '')),
      },
      {
        resourceId: present(skippedRunId, 'skipped run'),
        event: 'run.finished',
        get: () => client.getRun(present(skippedRunId, '')),
      },
      { resourceId: suiteRunId, event: 'suite_run.finished', get: () => client.getSuiteRun(suiteRunId) },
    ];
    const verifier = new Webhook(endpoint.secret);
    const messageIds: string[] = [];
    for (const { resourceId, event, get } of expected) {
      const messages = await messagesOf(resourceId);
      expect(messages.map((m) => [m.event, m.endpointId])).toEqual([[event, endpoint.id]]);
      const id = present(messages[0], 'message').id;
      expect(id).toMatch(/^msg_[0-9a-f]{32}$/);
      messageIds.push(id);
      const requests = await requestsOf(id, 3);
      expect(requests.map((r) => r.answered)).toEqual([500, 500, 200]);
      // Same id and the same bytes on every try; each try signed, and the signature checks out.
      expect(new Set(requests.map((r) => r.body)).size).toBe(1);
      for (const r of requests) {
        const headers = { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature };
        expect(verifier.verify(r.body, headers)).toEqual(JSON.parse(r.body));
      }
      // The body is the API's GET of the resource plus the event.
      expect(JSON.parse(present(requests[0], 'request').body)).toEqual({ event, ...(await get()) });
      const delivered = await waitUntil(async () => {
        const m = await db.webhookMessage.findUniqueOrThrow({ where: { id } });
        return m.state === 'delivered' ? m : undefined;
      });
      expect(delivered.attempts).toBe(3);
    }

    // The delivery log shows the three attempts of each message.
    const log = await adminJson<WebhookDeliveriesOutput>('webhook', 'deliveries', endpoint.id);
    expect(log.deliveries.map((d) => d.messageId).sort()).toEqual([...messageIds].sort());
    for (const d of log.deliveries) {
      expect([d.state, d.attempts.map((a) => a.status)]).toEqual(['delivered', [500, 500, 200]]);
    }
    // Nothing else was sent: one message per finished resource.
    const ids = new Set(receiver.received.map((r) => r.id));
    expect(ids.size).toBe(3);
    await stopProcess(worker.child, 'SIGTERM');
  });

  it('a worker killed in the middle of a delivery loses no event: the next worker sends it with the same webhook-id', async () => {
    let hungOnce = false;
    let sawHang: () => void = () => undefined;
    const hang = new Promise<void>((resolve) => (sawHang = resolve));
    receiver.answerWith(
      () => {
        if (hungOnce) return 200;
        hungOnce = true;
        return 'hang';
      },
      () => sawHang(),
    );
    const first = startWorker();
    await waitForLog(first, 'worker ready');
    const runId = await client.createRun({ testId: testId('quick') });
    await hang;
    // The run is terminal and its event was being sent when the worker died.
    await stopProcess(first.child, 'SIGKILL');
    expect((await client.getRun(runId)).status).toBe('passed');
    const [message] = await messagesOf(runId);
    const id = present(message, 'the run.finished message').id;
    expect(message?.state).toBe('pending');

    const second = startWorker();
    await waitForLog(second, 'worker ready');
    const requests = await requestsOf(id, 2);
    expect(requests.map((r) => r.answered)).toEqual(['hung', 200]);
    expect(present(requests[1], 'retry').body).toBe(present(requests[0], 'first').body);
    await waitUntil(async () => (await db.webhookMessage.findUniqueOrThrow({ where: { id } })).state === 'delivered');
    await stopProcess(second.child, 'SIGTERM');
  });

  it('rotate-secret then redeliver sends the same message again, signed with the new secret', async () => {
    const worker = startWorker();
    await waitForLog(worker, 'worker ready');
    receiver.answerWith(() => 200);
    const delivered = present(
      await db.webhookMessage.findFirst({ where: { endpointId: endpoint.id, state: 'delivered' } }),
      'a delivered message',
    );
    const rotated = await adminJson<WebhookSecretOutput>('webhook', 'rotate-secret', endpoint.id);
    expect(rotated.secret).not.toBe(endpoint.secret);
    const before = receiver.received.filter((r) => r.id === delivered.id).length;
    await adminJson('webhook', 'redeliver', delivered.id);
    const again = present((await requestsOf(delivered.id, before + 1))[before], 'the redelivery');
    expect(again.body).toBe(delivered.body);
    const headers = {
      'webhook-id': again.id,
      'webhook-timestamp': again.timestamp,
      'webhook-signature': again.signature,
    };
    expect(() => new Webhook(endpoint.secret).verify(again.body, headers)).toThrow();
    expect(new Webhook(rotated.secret).verify(again.body, headers)).toEqual(JSON.parse(again.body));
    await waitUntil(
      async () => (await db.webhookMessage.findUniqueOrThrow({ where: { id: delivered.id } })).state === 'delivered',
    );
    const removed = await admin('webhook', 'remove', endpoint.id);
    expect(removed.code).toBe(0);
    expect(await db.webhookMessage.count({ where: { endpointId: endpoint.id } })).toBe(0);
    await stopProcess(worker.child, 'SIGTERM');
  });
});
