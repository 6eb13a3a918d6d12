/**
 * `pnpm bench fairness`: how long one workspace's first run waits behind another workspace's
 * backlog, with jobs in plain FIFO order (before) and with fair priorities (after); rewrites the
 * `fairness` section of docs/BENCHMARKS.md. Real Postgres rows and a real BullMQ queue (its own
 * Redis prefix, the development database with workspaces of its own, deleted afterwards); the
 * worker slots hold each run for a fixed time instead of opening a browser, so the figure is the
 * queue policy's alone and scales with a real run's duration.
 */
import { randomBytes } from 'node:crypto';
import { Worker } from 'bullmq';
import { JOBS } from '@testrun/contracts';
import { applyProject, createWorkspace } from '../packages/admin/src/operations';
import { createPrisma, type Db } from '@testrun/core/db';
import { readCommonConfig } from '@testrun/core/env';
import { ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { addRunJobs, createRedis, createRunQueue } from '@testrun/core/queue';
import { fairPositions, insertRuns, type PlannedTest } from '@testrun/core/runs';
import { first, machineLine, spread, writeSection } from './report';

const BACKLOG = 200;
const RUN_MS = 100;
const SLOTS = 2;
const ROUNDS = 3;

type Mode = 'fifo' | 'fair';

async function workspaceWithTest(db: Db, name: string): Promise<{ workspaceId: string; test: PlannedTest }> {
  const workspace = await createWorkspace(db, { name, plan: 'enterprise' });
  const project = await applyProject(db, workspace.id, {
    slug: 'fair',
    name: 'Fairness',
    baseUrl: 'http://127.0.0.1:2',
    suites: [{ slug: 's', name: 'S', tests: [{ key: 't', name: 'T', steps: [{ action: 'goto', url: '/' }] }] }],
  });
  const testId = first(first(project.suites, 'suite').tests, 'test').id;
  const test = await db.test.findUniqueOrThrow({
    where: { id: testId },
    select: { id: true, enabled: true },
  });
  return { workspaceId: workspace.id, test: { ...test, baseUrl: 'http://127.0.0.1:2' } };
}

/** One round: A's backlog is enqueued and being served, then B's one run; B's wait in ms. */
async function round(db: Db, redisUrl: string, mode: Mode, a: Tenant, b: Tenant): Promise<number> {
  const prefix = `testrun-bench-fair-${randomBytes(3).toString('hex')}`;
  const connection = createRedis(redisUrl);
  const queue = createRunQueue(connection, prefix);
  const enqueue = async (tenant: Tenant, count: number): Promise<string[]> => {
    const { runIds } = await db.$transaction((tx) =>
      insertRuns(tx, {
        workspaceId: tenant.workspaceId,
        suiteId: null,
        tests: Array.from({ length: count }, () => tenant.test),
        headersKey: Buffer.alloc(32),
      }),
    );
    await addRunJobs(queue, runIds, mode === 'fair' ? await fairPositions(db, runIds) : new Map());
    return runIds;
  };

  await enqueue(a, BACKLOG);
  let late: { id: string; queuedAt: number } | null = null;
  let startedLate: () => void = () => undefined;
  const lateStarted = new Promise<number>((resolve) => {
    startedLate = () => resolve(Date.now());
  });
  const workerConnection = createRedis(redisUrl);
  const worker = new Worker(
    JOBS.run.queue,
    async (job) => {
      const runId = String(job.id);
      if (late?.id === runId) startedLate();
      await db.run.update({ where: { id: runId }, data: { status: 'running' } });
      await new Promise((resolve) => setTimeout(resolve, RUN_MS));
      await db.run.update({ where: { id: runId }, data: { status: 'passed' } });
    },
    { connection: workerConnection, prefix, concurrency: SLOTS },
  );
  // A's backlog is being served when B arrives.
  await new Promise((resolve) => setTimeout(resolve, 3 * RUN_MS));
  const queuedAt = Date.now();
  late = { id: first(await enqueue(b, 1), 'run'), queuedAt };
  const waited = (await lateStarted) - queuedAt;

  await worker.close(true);
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  workerConnection.disconnect();
  await db.run.deleteMany({ where: { workspaceId: { in: [a.workspaceId, b.workspaceId] } } });
  return waited;
}

type Tenant = Awaited<ReturnType<typeof workspaceWithTest>>;

/** Alternates FIFO and fair rounds; rewrites the `fairness` section. */
export async function run(): Promise<void> {
  const common = readCommonConfig({ ...process.env, LOG_LEVEL: 'error' });
  await ensureDatabase(common.databaseUrl);
  await migrateDatabase(common.databaseUrl);
  const db = createPrisma({ databaseUrl: common.databaseUrl, max: SLOTS + 4 });
  const a = await workspaceWithTest(db, 'bench-fair-a');
  const b = await workspaceWithTest(db, 'bench-fair-b');
  const waits: Record<Mode, number[]> = { fifo: [], fair: [] };
  try {
    for (let i = 0; i < ROUNDS; i++) {
      for (const mode of ['fifo', 'fair'] as const) {
        const waited = await round(db, common.redisUrl, mode, a, b);
        waits[mode].push(waited);
        process.stdout.write(`${mode} round ${i + 1}: B waited ${waited} ms\n`);
      }
    }
  } finally {
    await db.workspace.deleteMany({ where: { id: { in: [a.workspaceId, b.workspaceId] } } });
    await db.$disconnect();
  }
  const line = (mode: Mode, label: string) => {
    const s = spread(waits[mode]);
    return `| ${label} | ${s.median} ms | ${s.min}–${s.max} ms | ${(s.median / RUN_MS).toFixed(1)} |`;
  };
  writeSection(
    'fairness',
    `## Fairness between workspaces

\`pnpm bench fairness\`: workspace A enqueues ${BACKLOG} runs; once ${SLOTS} worker slots are serving
them, workspace B enqueues 1. B's wait is from the start of its request's work (its run row, its place in line, its job) to its run starting. Each run holds its
slot ${RUN_MS} ms (no browser: the figure is the queue policy's, and scales with a real run's
duration). ${ROUNDS} rounds of each order, alternating.

| Order | B's wait, median | spread | in runs' durations |
|---|---|---|---|
${line('fifo', 'FIFO (before)')}
${line('fair', 'fair priorities (after)')}

The target is at most about one run's duration per slot: B's run starts as soon as a slot frees. The
fair figure is a few of these 100 ms runs because it also holds B's enqueue (a transaction, a count and a
BullMQ add on a busy 2-core machine); against a real run of seconds it is well under one run.

Machine: ${machineLine()}.`,
  );
}
