import type { Db } from '@testrun/core/db';
import { readSuiteRun } from '@testrun/core/runs';
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

/**
 * A suite run's test entries count the files each run attached (docs/API.md, GET suite run:
 * `attachmentCount`) against Postgres: the run's current attempt only, attachments only (not
 * Playwright's own screenshots or traces), absent when none.
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

it("counts each run's attachments of its current attempt, and says nothing of a run without", async () => {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count: 3 }));
  const suite = present(applied.suites[0], 'the sample suite');
  const created = await insertSuiteRuns(db, t.workspace.id, suite.id, { baseUrl: 'http://127.0.0.1:2' });
  const suiteRunId = present(created.suiteRunId, 'the suite run');
  const runs = await db.run.findMany({ where: { suiteRunId }, orderBy: { position: 'asc' } });
  const [first, second, third] = runs;
  if (!first || !second || !third) throw new Error('three runs expected');
  // The second run was retried: its current attempt is 2.
  await db.run.update({ where: { id: second.id }, data: { attempt: 2 } });
  let n = 0;
  const artifact = (runId: string, attempt: number, kind: 'attachment' | 'screenshot' | 'trace') => ({
    id: `art_${t.tag}_${(n += 1)}`,
    runId,
    workspaceId: t.workspace.id,
    attempt,
    kind,
    name: `file ${n}`,
    storageKey: `k/${t.tag}/${n}`,
    contentType: 'text/plain',
    sizeBytes: 1,
  });
  await db.artifact.createMany({
    data: [
      artifact(first.id, first.attempt, 'attachment'),
      artifact(first.id, first.attempt, 'attachment'),
      artifact(first.id, first.attempt, 'screenshot'),
      artifact(second.id, 1, 'attachment'),
      artifact(second.id, 1, 'attachment'),
      artifact(second.id, 2, 'attachment'),
      artifact(third.id, third.attempt, 'trace'),
    ],
  });

  const suiteRun = present(await readSuiteRun(db, keys, links, t.workspace.id, suiteRunId), 'the suite run');
  expect(suiteRun.tests.map((e) => [e.runId, e.attachmentCount])).toEqual([
    [first.id, 2],
    [second.id, 1],
    [third.id, undefined],
  ]);
  expect('attachmentCount' in present(suiteRun.tests[2], 'the third entry')).toBe(false);
});
