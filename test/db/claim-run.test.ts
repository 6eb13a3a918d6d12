import { createServer, connect, type Server, type Socket } from 'node:net';
import { createPrisma, type Db } from '@testrun/core/db';
import { createLogger } from '@testrun/core/logger';
import { startRun } from '@testrun/core/runs';
import { claimRun } from '../../apps/worker/src/run/claim';
import { MAX_RUN_ATTEMPTS } from '../../apps/worker/src/run/run-outcomes';
import { retryWrite } from '../../apps/worker/src/run/retry-write';
import { applySampleProject, createTenant, insertSuiteRuns, sampleProject, testDb } from '../support/harness';
import { present } from '../support/present';

/**
 * A claim that commits in Postgres but whose reply never comes back (the connection cut right after
 * the statement, through a loopback proxy in front of the test database): the worker's claim, tried
 * again, recognises the attempt it committed instead of taking a second one. The same cut under a
 * plain retried startRun takes attempt 2, which shows the cut lands after the commit.
 */
let db: Db;
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.$disconnect();
});

/**
 * A TCP proxy to the test database that, when armed with a marker, cuts the connection at the next
 * message holding it (a statement's text): after Postgres replied (`reply`: it committed, an implicit
 * transaction commits before its reply; the reply is swallowed), or before it reaches Postgres.
 */
type Cut = 'reply' | 'request';
async function commitCutter(): Promise<{
  url: string;
  arm: (marker: string, cut?: Cut) => void;
  cuts: () => number;
  close: () => Promise<void>;
}> {
  const target = new URL(present(process.env.DATABASE_URL, 'DATABASE_URL'));
  let armed: { marker: string; cut: Cut } | null = null;
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let committing = false;
    client.on('data', (chunk: Buffer) => {
      if (armed !== null && chunk.includes(armed.marker)) {
        const { cut } = armed;
        armed = null;
        if (cut === 'request') {
          cuts += 1;
          client.destroy();
          upstream.destroy();
          return;
        }
        committing = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (committing) {
        // Postgres answered the COMMIT (so it is durable); the worker never hears it.
        cuts += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      a.on('close', () => b.destroy());
      a.on('error', () => b.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    arm: (marker, cut = 'reply') => (armed = { marker, cut }),
    cuts: () => cuts,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function queuedRun(): Promise<{ runId: string; suiteRunId: string }> {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count: 2, disabled: 0 }));
  const suite = present(applied.suites[0], 'the sample suite');
  const created = await insertSuiteRuns(db, t.workspace.id, suite.id, { baseUrl: 'http://127.0.0.1:2' });
  return { runId: present(created.runIds[0], 'a run'), suiteRunId: present(created.suiteRunId, 'a suite run') };
}

async function withCutter(
  check: (cutDb: Db, arm: (marker: string, cut?: Cut) => void, cuts: () => number) => Promise<void>,
): Promise<void> {
  const cutter = await commitCutter();
  const cutDb = createPrisma({ databaseUrl: cutter.url, max: 1 });
  try {
    await check(cutDb, cutter.arm, cutter.cuts);
  } finally {
    await cutDb.$disconnect();
    await cutter.close();
  }
}

it('a claim whose commit reply was lost recognises its own attempt when tried again', async () => {
  const { runId, suiteRunId } = await queuedRun();
  await withCutter(async (cutDb, arm, cuts) => {
    await cutDb.$queryRaw`SELECT 1`;
    arm('claim_token');
    const claimed = await claimRun(cutDb, runId, createLogger({ service: 'test', level: 'error' }), 10_000);
    expect(cuts()).toBe(1);
    expect(claimed).toMatchObject({ claim: { id: runId, attempt: 1, prevStatus: null } });
  });
  expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ status: 'running', attempt: 1 });
  const suiteRun = await db.suiteRun.findUniqueOrThrow({ where: { id: suiteRunId } });
  expect([suiteRun.queuedCount, suiteRun.runningCount]).toEqual([1, 1]);
});

it('the same cut under a plain retried startRun takes a second attempt (what the claim avoids)', async () => {
  const { runId } = await queuedRun();
  await withCutter(async (cutDb, arm, cuts) => {
    await cutDb.$queryRaw`SELECT 1`;
    arm('claim_token');
    const claim = await retryWrite(() => startRun(cutDb, runId, 2), {
      boundMs: 10_000,
      firstDelayMs: 10,
    });
    expect(cuts()).toBe(1);
    expect(claim).toMatchObject({ attempt: 2, prevStatus: 'running' });
  });
});

it('a claim whose first try never reached Postgres claims the run on the next', async () => {
  const { runId } = await queuedRun();
  await withCutter(async (cutDb, arm, cuts) => {
    await cutDb.$queryRaw`SELECT 1`;
    arm('claim_token', 'request');
    const claimed = await claimRun(cutDb, runId, createLogger({ service: 'test', level: 'error' }), 10_000);
    expect(cuts()).toBe(1);
    expect(claimed).toMatchObject({ claim: { id: runId, attempt: 1, prevStatus: 'queued' } });
  });
  expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ status: 'running', attempt: 1 });
});

it('a running run out of attempts is ended worker_lost by the claim that cannot take it', async () => {
  const { runId } = await queuedRun();
  // Its workers were lost on every attempt the worker allows: the claim's statement says so.
  await db.run.update({ where: { id: runId }, data: { status: 'running', attempt: MAX_RUN_ATTEMPTS } });
  const claimed = await claimRun(db, runId, createLogger({ service: 'test', level: 'error' }));
  expect(claimed).toEqual({ unclaimable: 'out_of_attempts' });
  expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
    status: 'error',
    outcomeCode: 'worker_lost',
  });
});

it('a running run a live worker holds is left to it, even on its last attempt, and taken over once the hold lapses', async () => {
  const { runId } = await queuedRun();
  const log = createLogger({ service: 'test', level: 'error' });
  const lapse = () => db.run.update({ where: { id: runId }, data: { heldUntil: new Date(Date.now() - 1_000) } });
  expect(await startRun(db, runId, MAX_RUN_ATTEMPTS, null, null, 60_000)).toMatchObject({ attempt: 1 });

  // A job given to it again (BullMQ's stalled check misjudged its busy worker, or the reconciler
  // after Redis lost it) finds the hold live: no second attempt beside the one still running.
  expect(await claimRun(db, runId, log, undefined, null, 60_000)).toEqual({ unclaimable: 'held' });
  expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ status: 'running', attempt: 1 });

  // Its worker gone, the hold lapses and the next claim takes the run over as attempt 2.
  await lapse();
  expect(await claimRun(db, runId, log, undefined, null, 60_000)).toMatchObject({
    claim: { id: runId, attempt: 2, prevStatus: 'running' },
  });

  // On its last attempt, held, a claim neither takes it nor ends it worker_lost.
  expect(await claimRun(db, runId, log, undefined, null, 60_000)).toEqual({ unclaimable: 'held' });
  expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ status: 'running', attempt: 2 });
  await lapse();
  expect(await claimRun(db, runId, log)).toEqual({ unclaimable: 'out_of_attempts' });
  expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ outcomeCode: 'worker_lost' });
});
