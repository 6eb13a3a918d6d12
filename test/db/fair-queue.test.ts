import { Redis } from 'ioredis';
import type { Db } from '@testrun/core/db';
import { addRunJobs, createRunQueue, type RunQueue } from '@testrun/core/queue';
import { fairPositions } from '@testrun/core/runs';
import { applySampleProject, createTenant, insertSuiteRuns, sampleProject, testDb } from '../support/harness';
import { present } from '../support/present';

/** Workspaces share the run queue fairly: a backlog of one does not hold up another's first run. */
let db: Db;
let redis: Redis;
let queue: RunQueue;
const prefix = `${present(process.env.REDIS_PREFIX, 'REDIS_PREFIX')}-fair`;

beforeAll(() => {
  db = testDb();
  redis = new Redis(present(process.env.REDIS_URL, 'REDIS_URL'), { maxRetriesPerRequest: null });
  queue = createRunQueue(redis, prefix);
});
afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  redis.disconnect();
  await db.$disconnect();
});

/** A workspace with `count` queued runs, created in one request; their ids in creation order. */
async function queuedRuns(count: number): Promise<string[]> {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count }));
  const suite = present(applied.suites[0], 'the sample suite');
  const { runIds } = await insertSuiteRuns(db, t.workspace.id, suite.id, {
    baseUrl: 'http://127.0.0.1:2',
    suiteRun: false,
  });
  return runIds;
}

async function enqueue(runIds: string[]): Promise<void> {
  await addRunJobs(queue, runIds, await fairPositions(db, runIds));
}

it("places each run after its workspace's runs already queued or running", async () => {
  const first = await queuedRuns(5);
  const firstPositions = await fairPositions(db, first);
  expect([...firstPositions.values()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
  // Another workspace's runs start their own line.
  const other = await queuedRuns(2);
  expect([...(await fairPositions(db, other)).values()].sort((a, b) => a - b)).toEqual([1, 2]);
  // A run that is no longer queued or running leaves the line.
  await db.run.update({ where: { id: present(first[0], 'a run') }, data: { status: 'passed' } });
  expect((await fairPositions(db, [present(first[4], 'a run')])).get(present(first[4], 'a run'))).toBe(4);
});

it("serves another workspace's first run before most of a workspace's backlog", async () => {
  const backlog = await queuedRuns(40);
  await enqueue(backlog);
  const [late] = await queuedRuns(1);
  const lateId = present(late, 'the late run');
  await enqueue([lateId]);

  // BullMQ hands out prioritized jobs in the order of this set (priority, then insertion).
  const served = (await queue.getPrioritized(0, -1)).map((job) => present(job.id, 'job id'));
  expect(served).toHaveLength(backlog.length + 1);

  expect(served.indexOf(lateId)).toBeLessThanOrEqual(1);
  // The backlog itself keeps its order.
  expect(served.filter((id) => id !== lateId)).toEqual(backlog);
});
