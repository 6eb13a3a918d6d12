import type { Db } from '@testrun/core/db';
import { applySampleProject, createTenant, insertSuiteRuns, sampleProject, testDb } from '../support/harness';

/*
 * A request's `workers` (docs/API.md, docs/PLAYWRIGHT.md "Batches"), against real Postgres: it is
 * written over each Playwright test's config `workers` in its run's definition, the one place the
 * worker's batches read it; a step test's steps are left as they are, and without it the config's
 * stays.
 */
let db: Db;
beforeAll(() => {
  db = testDb();
});
afterAll(() => db.$disconnect());

/** A suite of three tests: two Playwright tests (config `workers: 1`, and none) and a step test. */
async function mixedSuite(): Promise<{ workspaceId: string; suiteId: string }> {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`w-${t.tag}`, { count: 3 }));
  const [suite] = applied.suites;
  if (!suite) throw new Error('the sample project has no suite');
  const tests = await db.test.findMany({ where: { suiteId: suite.id }, orderBy: { position: 'asc' } });
  for (const [i, test] of tests.slice(0, 2).entries()) {
    const playwright = {
      bundle: `sha256:${'0'.repeat(64)}`,
      config: 'playwright.config.ts',
      file: 'a.spec.ts',
      line: i + 1,
      column: 1,
      titlePath: [`t${i}`],
      project: 'app',
      browser: 'chromium',
      tags: [],
      ...(i === 0 ? { workers: 1 } : {}),
    };
    await db.test.update({ where: { id: test.id }, data: { steps: { playwright } } });
  }
  return { workspaceId: t.workspace.id, suiteId: suite.id };
}

async function definitions(runIds: readonly string[]): Promise<unknown[]> {
  const runs = await db.run.findMany({ where: { id: { in: [...runIds] } }, orderBy: { position: 'asc' } });
  return runs.map((r) => [r.kind, (r.steps as { playwright?: { workers?: number } }).playwright?.workers ?? null]);
}

it("writes the request's workers over every Playwright test's config workers, and leaves step tests alone", async () => {
  const { workspaceId, suiteId } = await mixedSuite();
  const steps = (await db.test.findMany({ where: { suiteId }, orderBy: { position: 'asc' } }))[2]?.steps;
  const { runIds } = await insertSuiteRuns(db, workspaceId, suiteId, { baseUrl: 'http://127.0.0.1:2', workers: 2 });
  expect(await definitions(runIds)).toEqual([
    ['playwright', 2],
    ['playwright', 2],
    ['steps', null],
  ]);
  const stepRun = await db.run.findUniqueOrThrow({ where: { id: runIds[2] } });
  expect(stepRun.steps).toEqual(steps);
});

it("keeps the config's workers when the request gives none", async () => {
  const { workspaceId, suiteId } = await mixedSuite();
  const { runIds } = await insertSuiteRuns(db, workspaceId, suiteId, { baseUrl: 'http://127.0.0.1:2' });
  expect(await definitions(runIds)).toEqual([
    ['playwright', 1],
    ['playwright', null],
    ['steps', null],
  ]);
});
