import { Queue } from 'bullmq';
import { JOBS, type WebhookJobPayload } from '@testrun/contracts';
import { addWebhookEndpoint } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { createLogger } from '@testrun/core/logger';
import { createRedis } from '@testrun/core/queue';
import { deriveKeys } from '@testrun/core/secrets';
import { WebhookRelay } from '../../apps/worker/src/webhooks/webhook-relay';
import { webhookJobOptions } from '../../apps/worker/src/webhooks/webhook-worker';
import {
  applySampleProject,
  createTenant,
  insertSuiteRuns,
  sampleProject,
  testDb,
  testSecret,
} from '../support/harness';

/**
 * The relay between the outbox and the webhook queue, on the real database and Redis (a queue
 * prefix of its own, no worker consuming it): every pending message gets exactly one job, adding
 * again is harmless, and a queue that lost its jobs gets them back at the next sweep.
 */
let db: Db;
const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const queue = new Queue<WebhookJobPayload>(JOBS.webhook.queue, {
  connection: redis,
  prefix: `${process.env.REDIS_PREFIX}-relay`,
});
const retry = { firstDelayMs: 1_000, maxDelayMs: 1_000, windowMs: 3_000 };

beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  redis.disconnect();
  await db.$disconnect();
});

function relay(sweepIntervalMs: number) {
  return new WebhookRelay({
    db,
    queue,
    logger: createLogger({ service: 'test', level: 'error' }),
    jobOptions: webhookJobOptions(retry),
    intervalMs: 1_000,
    sweepIntervalMs,
  });
}

const jobIds = async () =>
  (await queue.getJobs(['waiting', 'prioritized', 'delayed', 'active'])).map((j) => j.id).sort();

it('hands each pending message to the queue once, and again after the queue lost it', async () => {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`r-${t.tag}`, { count: 2, disabled: 2 }));
  await addWebhookEndpoint(db, deriveKeys(testSecret()).headers, {
    workspaceId: t.workspace.id,
    url: 'http://127.0.0.1:9/hooks',
    events: ['run.finished', 'suite_run.finished'],
  });
  // Both tests disabled: two runs and their suite run are created terminal, three messages.
  await insertSuiteRuns(db, t.workspace.id, applied.suites[0]?.id ?? '', { baseUrl: 'http://127.0.0.1:2' });
  const messages = await db.webhookMessage.findMany({ where: { workspaceId: t.workspace.id } });
  expect(messages).toHaveLength(3);
  const expected = messages.map((m) => `${m.id}.1`).sort();

  // A relay sweeps at its first pass, then every sweep interval.
  const running = relay(3_600_000);
  expect(await running.pass()).toBe(3);
  expect(await jobIds()).toEqual(expected);
  const job = await queue.getJob(expected[0] ?? '');
  expect(job?.opts.attempts).toBe(4);
  expect(job?.data).toEqual({ messageId: expected[0]?.replace(/\.1$/, ''), round: 1 });

  // A relay that died after adding, before marking: the next pass adds the same jobs, BullMQ keeps one each.
  await db.webhookMessage.updateMany({ where: { workspaceId: t.workspace.id }, data: { queuedRound: null } });
  expect(await running.pass()).toBe(3);
  expect(await jobIds()).toEqual(expected);

  // Redis lost every job: a pass without a sweep adds nothing new, a sweep adds every pending one back.
  await queue.obliterate({ force: true });
  expect(await running.pass()).toBe(0);
  expect(await jobIds()).toEqual([]);
  await relay(0).pass();
  expect(await jobIds()).toEqual(expected);

  // A delivered message is never handed over again.
  await db.webhookMessage.updateMany({ where: { workspaceId: t.workspace.id }, data: { state: 'delivered' } });
  await queue.obliterate({ force: true });
  await relay(0).pass();
  expect(await jobIds()).toEqual([]);
});

it("gives each job its message's place in its workspace's line as its priority", async () => {
  await queue.obliterate({ force: true });
  const key = deriveKeys(testSecret()).headers;
  const emit = async (count: number) => {
    const t = await createTenant(db);
    const applied = await applySampleProject(
      db,
      t.workspace.id,
      sampleProject(`p-${t.tag}`, { count, disabled: count }),
    );
    await addWebhookEndpoint(db, key, {
      workspaceId: t.workspace.id,
      url: 'http://127.0.0.1:9/h',
      events: ['run.finished'],
    });
    await insertSuiteRuns(db, t.workspace.id, applied.suites[0]?.id ?? '', { baseUrl: 'http://127.0.0.1:2' });
    return t.workspace.id;
  };
  const priorities = async (workspaceId: string) => {
    const messages = await db.webhookMessage.findMany({
      where: { workspaceId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return Promise.all(messages.map(async (m) => (await queue.getJob(`${m.id}.1`))?.opts.priority));
  };
  // A's three messages are in line first; B's first, handed over after them, is still first of its own.
  const a = await emit(3);
  await relay(3_600_000).pass();
  const b = await emit(2);
  await relay(3_600_000).pass();
  expect(await priorities(a)).toEqual([1, 2, 3]);
  expect(await priorities(b)).toEqual([1, 2]);
  // A message handed over later goes behind its workspace's pending ones, not behind every workspace's.
  const [next] = await db.webhookMessage.findMany({ where: { workspaceId: a }, take: 1 });
  await db.webhookMessage.update({ where: { id: next?.id ?? '' }, data: { queuedRound: null } });
  await queue.obliterate({ force: true });
  await relay(3_600_000).pass();
  expect((await queue.getJob(`${next?.id ?? ''}.1`))?.opts.priority).toBe(3);
});
