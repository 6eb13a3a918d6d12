import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { artifactKey, LocalArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import {
  dropHiddenSetupArtifacts,
  findSetupArtifact,
  insertSetupArtifacts,
  readRun,
  readSuiteRun,
  recordSetupResult,
  type SetupResultInput,
} from '@testrun/core/runs';
import { deriveKeys } from '@testrun/core/secrets';
import { purgeExpired } from '@testrun/worker';
import {
  applySampleProject,
  createTenant,
  insertSuiteRuns,
  sampleProject,
  testDb,
  testSecret,
} from '../support/harness';
import { present } from '../support/present';

/**
 * A setup test's evidence against Postgres and the local artifact store (docs/PLAYWRIGHT.md, "Setup
 * projects"): the entry lists the files of the execution it shows only, a file is found only through
 * its own suite run (or run), a run outside a suite run keeps its setup tests, and retention deletes
 * the files and rows with the artifacts of the run whose sandbox made them.
 */
let db: Db;
const root = mkdtempSync(path.join(tmpdir(), 'testrun-setup-evidence-'));
const store = new LocalArtifactStore(root);
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.$disconnect();
  rmSync(root, { recursive: true, force: true });
});

const keys = deriveKeys(testSecret());
const links = { publicBaseUrl: 'http://testrun.invalid', viewLinkTtlDays: 30 };
const DAY = 24 * 60 * 60 * 1000;

type Owner = Pick<SetupResultInput, 'workspaceId' | 'suiteRunId' | 'runId'>;

function execution(owner: Owner, status: 'passed' | 'failed'): SetupResultInput {
  return {
    ...owner,
    executionId: randomUUID(),
    key: 'pw-setup-key',
    name: '[setup] › seeds the shop',
    location: { file: 'auth.setup.ts', line: 3, column: 1, titlePath: ['seeds the shop'], project: 'setup' },
    status,
    outcomeCode: status === 'failed' ? 'expectation_failed' : null,
    outcomeMessage: status === 'failed' ? 'Error: seed refused' : null,
    resultSummary: status === 'failed' ? 'Failed at step 1.' : 'Passed.',
    failure: null,
    steps: [],
    durationMs: 12,
    startedAt: new Date(),
    finishedAt: new Date(),
  };
}

/** Records an execution and, when its entry shows it, a screenshot of it (file and row), as the worker does. */
async function recordWithShot(owner: Owner, storedUnder: string, status: 'passed' | 'failed') {
  const input = execution(owner, status);
  const entry = await recordSetupResult(db, input);
  if (!entry.shown) return { ...entry, artifactId: null };
  const id = newId(ID_PREFIX.artifact);
  const storageKey = artifactKey(owner.workspaceId, storedUnder, id, 'screenshot.png');
  await store.put(storageKey, Buffer.from('png bytes'));
  await insertSetupArtifacts(db, [
    {
      id,
      workspaceId: owner.workspaceId,
      setupResultId: entry.id,
      runId: storedUnder,
      executionId: input.executionId,
      kind: 'screenshot',
      name: 'screenshot.png',
      storageKey,
      contentType: 'image/png',
      sizeBytes: 9,
    },
  ]);
  for (const key of await dropHiddenSetupArtifacts(db, entry.id)) await store.deletePrefix(key);
  return { ...entry, artifactId: id };
}

async function setupFixture(suiteRun: boolean) {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count: 1 }));
  const suite = present(applied.suites[0], 'the sample suite');
  const created = await insertSuiteRuns(db, t.workspace.id, suite.id, { baseUrl: 'http://127.0.0.1:2', suiteRun });
  return { workspaceId: t.workspace.id, suiteRunId: created.suiteRunId, runId: present(created.runIds[0], 'a run') };
}

it('lists the files of the execution shown only, and finds a file through its own suite run only', async () => {
  const { workspaceId, suiteRunId, runId } = await setupFixture(true);
  const owner = { workspaceId, suiteRunId: present(suiteRunId, 'the suite run'), runId: null };
  const first = await recordWithShot(owner, runId, 'passed');
  const failed = await recordWithShot(owner, runId, 'failed');
  // A later pass does not replace the failure: its files are not kept.
  const later = await recordWithShot(owner, runId, 'passed');
  expect([first.shown, failed.shown, later.shown]).toEqual([true, true, false]);
  const read = present(await readSuiteRun(db, keys, links, workspaceId, owner.suiteRunId), 'the suite run');
  expect(read.setup_tests?.[0]?.artifacts).toEqual([
    { id: failed.artifactId, kind: 'screenshot', name: 'screenshot.png', content_type: 'image/png', size_bytes: 9 },
  ]);
  // The replaced execution's row and file are gone.
  expect(await db.setupArtifact.count({ where: { setupResultId: failed.id } })).toBe(1);
  const shown = present(await findSetupArtifact(db, { suiteRunId: owner.suiteRunId }, failed.artifactId ?? ''), 'it');
  const opened = await store.open(shown.storageKey);
  opened?.stream.destroy();
  expect(opened).not.toBeNull();
  expect(await findSetupArtifact(db, { suiteRunId: owner.suiteRunId }, first.artifactId ?? '')).toBeNull();
  // Not through another suite run, nor through a run's own view.
  const other = await setupFixture(true);
  expect(await findSetupArtifact(db, { suiteRunId: present(other.suiteRunId, 'x') }, shown.id)).toBeNull();
  expect(await findSetupArtifact(db, { runId }, shown.id)).toBeNull();
});

it('keeps the setup tests of a run outside a suite run, which its setup_failed outcome names', async () => {
  const { workspaceId, suiteRunId, runId } = await setupFixture(false);
  expect(suiteRunId).toBeNull();
  const owner = { workspaceId, suiteRunId: null, runId };
  const failed = await recordWithShot(owner, runId, 'failed');
  await db.run.update({
    where: { id: runId },
    data: {
      status: 'error',
      outcomeCode: 'setup_failed',
      resultSummary: 'Setup test "[setup] › seeds the shop" failed: Failed at step 1.',
      finishedAt: new Date(),
    },
  });
  const { run } = present(await readRun(db, workspaceId, runId), 'the run');
  expect(run.setup_tests).toEqual([
    expect.objectContaining({ id: failed.id, status: 'failed', executions: 1, artifacts: [expect.anything()] }),
  ]);
  expect(run.failed_setup).toMatchObject({ id: failed.id, name: '[setup] › seeds the shop' });
  expect(await findSetupArtifact(db, { runId }, failed.artifactId ?? '')).toMatchObject({ kind: 'screenshot' });
  // One owner only.
  await expect(recordSetupResult(db, execution({ ...owner, suiteRunId: 'srun_x' }, 'passed'))).rejects.toThrow();
});

it("retention deletes a setup test's files and rows with the artifacts of the run whose sandbox made them", async () => {
  const { workspaceId, suiteRunId, runId } = await setupFixture(true);
  const owner = { workspaceId, suiteRunId: present(suiteRunId, 'the suite run'), runId: null };
  const failed = await recordWithShot(owner, runId, 'failed');
  const row = await db.setupArtifact.findUniqueOrThrow({ where: { id: failed.artifactId ?? '' } });
  const old = new Date(Date.now() - 40 * DAY);
  await db.run.update({ where: { id: runId }, data: { status: 'failed', finishedAt: old } });
  await db.setupArtifact.update({ where: { id: row.id }, data: { createdAt: old } });
  await purgeExpired({ db, store, defaults: { artifactDays: 30, runDays: 90 } });
  expect(await db.setupArtifact.count({ where: { id: row.id } })).toBe(0);
  expect(await store.open(row.storageKey)).toBeNull();
  // The entry stays (its outcome and steps are the run's to keep), without files.
  const read = present(await readSuiteRun(db, keys, links, workspaceId, owner.suiteRunId), 'the suite run');
  expect(read.setup_tests?.[0]).toMatchObject({ id: failed.id, status: 'failed' });
  expect(read.setup_tests?.[0]?.artifacts).toBeUndefined();
});
