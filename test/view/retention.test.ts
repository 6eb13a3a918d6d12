import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { artifactKey, LocalArtifactStore, type ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { createLogger } from '@testrun/core/logger';
import { createRunQueue } from '@testrun/core/queue';
import { runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import { purgeExpired, Reconciler, type RetentionDays } from '@testrun/worker';
import { testDb } from '../support/harness';
import { present } from '../support/present';
import { startS3Server } from '../support/s3-server';
import { createSuiteRun, STEPS } from './seed';
import { startApi } from './server';

// Retention against real Postgres, the local artifact store (and once S3) and the real API with its
// view: runs and artifacts are back-dated, then purged by the worker's own purge (and once by a
// reconciler pass). The test file has a database of its own (test/support/per-file-setup.ts).
const DEFAULTS: RetentionDays = { artifactDays: 30, runDays: 90 };
const DAY = 24 * 60 * 60 * 1000;
// Links that still work: issued now, not when their back-dated subjects were created.
const TERMS = { issuedAt: new Date(), version: 0 };

const root = mkdtempSync(path.join(tmpdir(), 'testrun-retention-'));
const store = new LocalArtifactStore(root);
let db: Db;
let api: Awaited<ReturnType<typeof startApi>>;

beforeAll(async () => {
  db = testDb();
  api = await startApi(db, { store });
});
afterAll(async () => {
  await api.close();
  await db.$disconnect();
  rmSync(root, { recursive: true, force: true });
});

type Seeded = {
  workspaceId: string;
  apiKey: string;
  suiteRunId: string;
  runIds: string[];
  /** Storage keys of every file written, with the id of its artifact. */
  files: Array<{ runId: string; artifactId: string; key: string }>;
};

/**
 * A suite run of two finished runs (one passed, one failed), each with a step whose screenshot is
 * an artifact and a trace, files in the store and rows in Postgres, as the worker leaves them; then
 * everything is back-dated by `ageDays`.
 */
async function seedFinished(ageDays: number, target: ArtifactStore = store): Promise<Seeded> {
  const suite = await createSuiteRun(
    db,
    api.keys,
    [
      { name: 'passes', steps: [STEPS.home()] },
      { name: 'fails', steps: [STEPS.clickSignIn()] },
    ],
    { baseUrl: 'http://127.0.0.1:2' },
  );
  const created = new Date(Date.now() - ageDays * DAY);
  const files: Seeded['files'] = [];
  for (const [i, { id: runId }] of suite.runs.entries()) {
    const status = i === 0 ? 'passed' : 'failed';
    const shotId = newId(ID_PREFIX.artifact);
    const traceId = newId(ID_PREFIX.artifact);
    const shotKey = artifactKey(suite.workspaceId, runId, shotId, 'step-1.png');
    const traceKey = artifactKey(suite.workspaceId, runId, traceId, 'trace.zip');
    await target.put(shotKey, Buffer.from('png bytes'));
    await target.put(traceKey, Buffer.from('zip bytes'));
    files.push({ runId, artifactId: shotId, key: shotKey }, { runId, artifactId: traceId, key: traceKey });
    await db.run.update({
      where: { id: runId },
      data: {
        status,
        attempt: 1,
        resultSummary: status === 'passed' ? 'Passed.' : 'Failed at step 1.',
        outcomeCode: status === 'failed' ? 'element_not_found' : null,
        outcomeStep: status === 'failed' ? 1 : null,
        createdAt: created,
        startedAt: created,
        finishedAt: new Date(created.getTime() + 2_000),
        durationMs: 2_000,
      },
    });
    await db.stepResult.create({
      data: {
        id: newId(ID_PREFIX.step),
        runId,
        attempt: 1,
        index: 1,
        action: status === 'passed' ? 'goto' : 'click',
        label: status === 'passed' ? 'goto "/"' : 'click "text=Sign in"',
        target: '/',
        outcome: status,
        startedAt: created,
        durationMs: 1_000,
        screenshotId: shotId,
      },
    });
    const common = { runId, workspaceId: suite.workspaceId, attempt: 1, sizeBytes: 9, createdAt: created };
    await db.artifact.createMany({
      data: [
        {
          ...common,
          id: shotId,
          kind: 'screenshot',
          stepIndex: 1,
          name: 'step-1.png',
          storageKey: shotKey,
          contentType: 'image/png',
        },
        {
          ...common,
          id: traceId,
          kind: 'trace',
          stepIndex: null,
          name: 'trace.zip',
          storageKey: traceKey,
          contentType: 'application/zip',
        },
      ],
    });
  }
  const passed = 1;
  await db.suiteRun.update({
    where: { id: suite.suiteRunId },
    data: {
      status: 'failed',
      queuedCount: 0,
      passedCount: passed,
      failedCount: 1,
      createdAt: created,
      startedAt: created,
      finishedAt: new Date(created.getTime() + 4_000),
    },
  });
  return {
    workspaceId: suite.workspaceId,
    apiKey: suite.apiKey,
    suiteRunId: suite.suiteRunId,
    runIds: suite.runs.map((r) => r.id),
    files,
  };
}

async function filesLeft(seeded: Seeded, target: ArtifactStore = store): Promise<number> {
  const found = await Promise.all(seeded.files.map((f) => target.get(f.key)));
  return found.filter((body) => body !== null).length;
}

const getRun = (seeded: Seeded, runId: string) =>
  fetch(`${api.origin}/api/v1/runs/${runId}`, { headers: { Authorization: `Bearer ${seeded.apiKey}` } });
const getSuiteRun = (seeded: Seeded) =>
  fetch(`${api.origin}/api/v1/suite-runs/${seeded.suiteRunId}`, {
    headers: { Authorization: `Bearer ${seeded.apiKey}` },
  });

/** Purges to completion, a batch at a time, and says how many calls that took. */
async function purgeAll(batchSize: number): Promise<{ calls: number; runs: number; artifactRuns: number }> {
  const total = { calls: 0, runs: 0, artifactRuns: 0 };
  for (;;) {
    const report = await purgeExpired({ db, store, defaults: DEFAULTS, batchSize, budgetMs: 0 });
    total.calls += 1;
    total.runs += report.runs;
    total.artifactRuns += report.artifactRuns;
    if (report.done) return total;
    if (total.calls > 1_000) throw new Error('the purge never finished');
  }
}

describe('retention', () => {
  it('expired artifacts disappear from the store and the view', async () => {
    const old = await seedFinished(DEFAULTS.artifactDays + 5);
    const recent = await seedFinished(2);
    const [passedRun, failedRun] = old.runIds.map((id) => present(id, 'a seeded run'));
    const shotUrl = `${runViewUrl(api.origin, api.keys.view, present(failedRun, 'the failed run'), TERMS)}/artifacts/${present(old.files[2], 'a file').artifactId}`;
    expect((await fetch(shotUrl)).status).toBe(200);

    // One run per batch and no time budget: each call does exactly one bounded batch.
    const first = await purgeExpired({ db, store, defaults: DEFAULTS, batchSize: 1, budgetMs: 0 });
    expect(first).toMatchObject({ runs: 0, artifactRuns: 1, done: false });
    await purgeAll(1);

    expect(await filesLeft(old)).toBe(0);
    expect(await db.artifact.count({ where: { runId: { in: old.runIds } } })).toBe(0);
    const runs = await db.run.findMany({ where: { id: { in: old.runIds } }, select: { artifactsExpiredAt: true } });
    expect(runs).toHaveLength(2);
    for (const run of runs) expect(run.artifactsExpiredAt).toBeInstanceOf(Date);
    // The runs themselves stay: the API still answers, with their outcome.
    const stillThere = await getRun(old, present(failedRun, 'the failed run'));
    expect(stillThere.status).toBe(200);
    expect(await stillThere.json()).toMatchObject({ id: failedRun, status: 'failed' });

    // The view says "expired" where the screenshot and the trace were, and links to neither.
    const page = await (
      await fetch(runViewUrl(api.origin, api.keys.view, present(failedRun, 'the failed run'), TERMS))
    ).text();
    expect(page).toContain('class="expired"');
    expect(page).toMatch(/Expired: the screenshots, trace and video of this run were deleted on/);
    expect(page).not.toContain('/artifacts/');
    const suitePage = await (await fetch(suiteRunViewUrl(api.origin, api.keys.view, old.suiteRunId, TERMS))).text();
    expect(suitePage).toContain('class="expired"');
    expect(suitePage).not.toContain('/artifacts/');
    const fragment = await fetch(
      `${runViewUrl(api.origin, api.keys.view, present(passedRun, 'the passed run'), TERMS)}/fragment`,
    );
    expect(await fragment.text()).toContain('class="expired"');

    // The artifact's old URL is gone, and says so.
    const gone = await fetch(shotUrl);
    expect(gone.status).toBe(410);
    expect(await gone.text()).toContain('Artifact expired');

    // Recent runs keep everything.
    expect(await filesLeft(recent)).toBe(recent.files.length);
    expect(await db.artifact.count({ where: { runId: { in: recent.runIds } } })).toBe(recent.files.length);
    const recentPage = await (
      await fetch(runViewUrl(api.origin, api.keys.view, present(recent.runIds[1], 'a run'), TERMS))
    ).text();
    expect(recentPage).toContain('/artifacts/');
    expect(recentPage).not.toContain('class="expired"');
  });

  it('purges runs past their retention in bounded batches: steps, files, suite run, and GET is 404', async () => {
    const old = await seedFinished(DEFAULTS.runDays + 1);
    const recent = await seedFinished(DEFAULTS.artifactDays - 1);
    const runUrl = runViewUrl(api.origin, api.keys.view, present(old.runIds[0], 'a run'), TERMS);
    expect((await getRun(old, present(old.runIds[0], 'a run'))).status).toBe(200);

    // Two runs, one per batch: the first batch leaves the suite run with one run, the second ends it.
    const first = await purgeExpired({ db, store, defaults: DEFAULTS, batchSize: 1, budgetMs: 0 });
    expect(first).toMatchObject({ runs: 1, suiteRuns: 0, done: false });
    expect(await db.suiteRun.count({ where: { id: old.suiteRunId } })).toBe(1);
    const second = await purgeExpired({ db, store, defaults: DEFAULTS, batchSize: 1, budgetMs: 0 });
    expect(second).toMatchObject({ runs: 1, suiteRuns: 1 });
    await purgeAll(1);

    expect(await filesLeft(old)).toBe(0);
    expect(await db.run.count({ where: { id: { in: old.runIds } } })).toBe(0);
    expect(await db.stepResult.count({ where: { runId: { in: old.runIds } } })).toBe(0);
    expect(await db.artifact.count({ where: { runId: { in: old.runIds } } })).toBe(0);
    expect(await db.suiteRun.count({ where: { id: old.suiteRunId } })).toBe(0);
    for (const runId of old.runIds) expect((await getRun(old, runId)).status).toBe(404);
    expect((await getSuiteRun(old)).status).toBe(404);
    expect((await fetch(runUrl)).status).toBe(404);
    expect((await fetch(suiteRunViewUrl(api.origin, api.keys.view, old.suiteRunId, TERMS))).status).toBe(404);

    // Younger than both retentions: untouched.
    expect(await filesLeft(recent)).toBe(recent.files.length);
    expect((await getSuiteRun(recent)).status).toBe(200);
    expect(await db.stepResult.count({ where: { runId: { in: recent.runIds } } })).toBe(2);
  });

  it("a workspace's own retention wins over the defaults, either way", async () => {
    const shorter = await seedFinished(10);
    await db.workspace.update({
      where: { id: shorter.workspaceId },
      data: { artifactRetentionDays: 3, runRetentionDays: 7 },
    });
    const shorterArtifacts = await seedFinished(5);
    await db.workspace.update({ where: { id: shorterArtifacts.workspaceId }, data: { artifactRetentionDays: 3 } });
    const longer = await seedFinished(DEFAULTS.runDays + 10);
    await db.workspace.update({
      where: { id: longer.workspaceId },
      data: { artifactRetentionDays: 36_500, runRetentionDays: 36_500 },
    });

    await purgeAll(500);

    expect(await db.run.count({ where: { id: { in: shorter.runIds } } })).toBe(0);
    expect(await filesLeft(shorter)).toBe(0);
    expect(await db.run.count({ where: { id: { in: shorterArtifacts.runIds } } })).toBe(2);
    expect(await filesLeft(shorterArtifacts)).toBe(0);
    expect(await db.run.count({ where: { id: { in: longer.runIds }, artifactsExpiredAt: null } })).toBe(2);
    expect(await filesLeft(longer)).toBe(longer.files.length);
  });

  it('deletes files before rows: a store that fails leaves every row for the next pass', async () => {
    const old = await seedFinished(DEFAULTS.runDays + 3);
    const failing: ArtifactStore = {
      put: (key, body) => store.put(key, body),
      open: (key, range) => store.open(key, range),
      get: (key) => store.get(key),
      deletePrefix: () => Promise.reject(new Error('the store is down')),
      delete: () => Promise.reject(new Error('the store is down')),
      modifiedAt: (key) => store.modifiedAt(key),
    };
    await expect(purgeExpired({ db, store: failing, defaults: DEFAULTS })).rejects.toThrow('the store is down');
    expect(await db.run.count({ where: { id: { in: old.runIds } } })).toBe(2);
    expect(await db.artifact.count({ where: { runId: { in: old.runIds } } })).toBe(4);

    await purgeAll(500);
    expect(await db.run.count({ where: { id: { in: old.runIds } } })).toBe(0);
    expect(await filesLeft(old)).toBe(0);
  });

  it("runs in the reconciler's pass, which reports what it deleted", async () => {
    const old = await seedFinished(DEFAULTS.runDays + 4);
    const redis = new Redis(present(process.env.REDIS_URL, 'REDIS_URL'), { maxRetriesPerRequest: null });
    const queue = createRunQueue(redis, present(process.env.REDIS_PREFIX, 'REDIS_PREFIX'));
    try {
      const reconciler = new Reconciler({
        db,
        queue,
        logger: createLogger({ service: 'test', level: 'error' }),
        retention: { store, defaults: DEFAULTS },
      });
      const report = await reconciler.runOnce();
      expect(report.ran).toBe(true);
      expect(report.expired?.runs).toBeGreaterThanOrEqual(2);
      expect(await db.run.count({ where: { id: { in: old.runIds } } })).toBe(0);
      expect(await filesLeft(old)).toBe(0);
    } finally {
      await queue.close();
      redis.disconnect();
    }
  });

  it('deletes the files from an S3 store as well', async () => {
    const server = await startS3Server();
    const s3 = server.store('retention');
    try {
      const old = await seedFinished(DEFAULTS.runDays + 6, s3);
      const recent = await seedFinished(1, s3);
      expect(await filesLeft(old, s3)).toBe(old.files.length);
      for (let calls = 0; ; calls++) {
        if ((await purgeExpired({ db, store: s3, defaults: DEFAULTS })).done) break;
        if (calls > 100) throw new Error('the purge never finished');
      }
      expect(await filesLeft(old, s3)).toBe(0);
      expect(await db.run.count({ where: { id: { in: old.runIds } } })).toBe(0);
      expect(await filesLeft(recent, s3)).toBe(recent.files.length);
    } finally {
      s3.close();
      await server.close();
    }
  });
});
