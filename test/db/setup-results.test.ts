import { randomUUID } from 'node:crypto';
import type { Db } from '@testrun/core/db';
import { readFingerprints, readRun, readSuiteRun, recordSetupResult, type SetupResultInput } from '@testrun/core/runs';
import { deriveKeys } from '@testrun/core/secrets';
import { suiteRunFingerprint } from '../../apps/api/src/services/long-poll';
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
 * A suite run's setup tests against Postgres (docs/PLAYWRIGHT.md, "Setup projects"): one entry per
 * setup test, showing the first execution that failed when one did (else the latest), every
 * execution counted; a waiting GET sees each one recorded; a setup_failed run names its setup test.
 */
let db: Db;
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.$disconnect();
});

const keys = deriveKeys(testSecret());
const links = { publicBaseUrl: 'http://testrun.invalid', viewLinkTtlDays: 30 };

function execution(
  base: Pick<SetupResultInput, 'workspaceId' | 'suiteRunId'> & Partial<Pick<SetupResultInput, 'runId'>>,
  status: 'passed' | 'failed',
  summary: string,
): SetupResultInput {
  return {
    runId: null,
    executionId: randomUUID(),
    ...base,
    key: 'pw-setup-key',
    name: '[setup] › seeds the shop',
    location: { file: 'auth.setup.ts', line: 3, column: 1, titlePath: ['seeds the shop'], project: 'setup' },
    status,
    outcomeCode: status === 'failed' ? 'expectation_failed' : null,
    outcomeMessage: status === 'failed' ? 'Error: seed refused' : null,
    resultSummary: summary,
    failure:
      status === 'failed' ? { message: 'Error: seed refused', expected: null, received: null, location: null } : null,
    steps: [
      { category: 'test.step', depth: 0, label: 'seed', location: null, outcome: status, error: null, durationMs: 4 },
    ],
    durationMs: 12,
    startedAt: new Date(),
    finishedAt: new Date(),
  };
}

it('keeps one entry per setup test: the first failed execution over later passes, each counted', async () => {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count: 1 }));
  const suite = present(applied.suites[0], 'the sample suite');
  const created = await insertSuiteRuns(db, t.workspace.id, suite.id, { baseUrl: 'http://127.0.0.1:2' });
  const suiteRunId = present(created.suiteRunId, 'the suite run');
  const base = { workspaceId: t.workspace.id, suiteRunId };
  const read = async () => present(await readSuiteRun(db, keys, links, t.workspace.id, suiteRunId), 'the suite run');
  const fingerprint = async () => (await readFingerprints(db, [], [suiteRunId]))[0]?.fingerprint;

  expect((await read()).setup_tests).toBeUndefined();
  const before = await fingerprint();
  await recordSetupResult(db, execution(base, 'passed', 'Passed (first sandbox)'));
  // A waiting GET wakes up for it, and sees what a GET then reads.
  expect(await fingerprint()).not.toBe(before);
  expect(await fingerprint()).toBe(suiteRunFingerprint(await read()));
  await recordSetupResult(db, execution(base, 'failed', 'Failed at step 1 (second sandbox)'));
  await recordSetupResult(db, execution(base, 'passed', 'Passed (third sandbox)'));
  const suiteRun = await read();
  expect(suiteRun.total_count).toBe(1);
  expect(suiteRun.setup_tests).toEqual([
    expect.objectContaining({
      name: '[setup] › seeds the shop',
      status: 'failed',
      result_summary: 'Failed at step 1 (second sandbox)',
      failure: { message: 'Error: seed refused', expected: null, received: null, location: null },
      executions: 3,
      failed_executions: 1,
    }),
  ]);
  expect(await fingerprint()).toBe(suiteRunFingerprint(suiteRun));

  // The suite run's run that ended on it names it.
  const runId = present(created.runIds[0], 'the run');
  await db.run.update({
    where: { id: runId },
    data: {
      status: 'error',
      outcomeCode: 'setup_failed',
      resultSummary: 'Setup test "[setup] › seeds the shop" failed: Failed at step 1 (second sandbox)',
      finishedAt: new Date(),
    },
  });
  const run = present(await readRun(db, t.workspace.id, runId), 'the run').run;
  expect(run.failed_setup).toEqual({
    id: suiteRun.setup_tests?.[0]?.id,
    name: '[setup] › seeds the shop',
    status: 'failed',
    result_summary: 'Failed at step 1 (second sandbox)',
    location: { file: 'auth.setup.ts', line: 3, column: 1, titlePath: ['seeds the shop'], project: 'setup' },
  });
});
