import { evidenceSettingsOrNull, isPlaywrightDefinition, type ProjectFile } from '@testrun/contracts';
import type { DbTx } from '../db';
import { ID_PREFIX, newId } from '../ids';
import { DeploymentError } from './errors';
import { insertArchivedTests, testRecord, type TestRecord } from './test-rows';

// The project row a deployment or activation locks, and the suite and test rows that give every
// test of a version its stable id.

export type LockedProject = { id: string; slug: string; active: { id: string; version: number } | null };

/**
 * The project row of `slug`, locked until the transaction ends (FOR UPDATE: runs being enqueued
 * hold it FOR KEY SHARE, so a run reads one version or the next, never half of each), with its active
 * deployment. With `create`, a project the workspace lacks is created from that file first.
 */
export async function lockProject(
  tx: DbTx,
  workspaceId: string,
  slug: string,
  create: ProjectFile,
): Promise<LockedProject>;
export async function lockProject(
  tx: DbTx,
  workspaceId: string,
  slug: string,
  create: null,
): Promise<LockedProject | null>;
export async function lockProject(
  tx: DbTx,
  workspaceId: string,
  slug: string,
  create: ProjectFile | null,
): Promise<LockedProject | null> {
  if (create) {
    const evidence = evidenceSettingsOrNull(create.evidence);
    await tx.$executeRaw`
      INSERT INTO projects (id, workspace_id, slug, name, base_url, evidence)
      VALUES (${newId(ID_PREFIX.project)}, ${workspaceId}, ${slug}, ${create.name}, ${create.baseUrl},
        ${evidence === null ? null : JSON.stringify(evidence)}::jsonb)
      ON CONFLICT (workspace_id, slug) DO NOTHING`;
  }
  const [row] = await tx.$queryRaw<
    Array<{ id: string; slug: string; active_id: string | null; active_version: number | null }>
  >`
    SELECT p.id, p.slug, p.active_deployment_id AS active_id,
      (SELECT d.version FROM deployments d WHERE d.id = p.active_deployment_id) AS active_version
    FROM projects p WHERE p.workspace_id = ${workspaceId} AND p.slug = ${slug} FOR UPDATE OF p`;
  if (!row) return null;
  const active = row.active_id === null ? null : { id: row.active_id, version: row.active_version ?? 0 };
  return { id: row.id, slug: row.slug, active };
}

/**
 * Refuses (412) when If-Match names another version than the active one: its number (quoted or
 * not), its id, `*` (any active version) or `0` (none active yet).
 */
export function checkIfMatch(project: LockedProject, ifMatch: string | null | undefined): void {
  if (ifMatch === undefined || ifMatch === null) return;
  const { active } = project;
  const tags = ifMatch.split(',').map((t) =>
    t
      .trim()
      .replace(/^W\//, '')
      .replace(/^"(.*)"$/, '$1'),
  );
  const matches = tags.some((t) =>
    t === '*' ? active !== null : active === null ? t === '0' : t === String(active.version) || t === active.id,
  );
  if (!matches)
    throw new DeploymentError(
      'precondition_failed',
      `If-Match names ${ifMatch}, but the active version of project "${project.slug}" is ${active ? `${active.version} (${active.id})` : 'none'}.`,
    );
}

export const rowKey = (suiteSlug: string, key: string) => JSON.stringify([suiteSlug, key]);

/**
 * What a test is one test by: a Playwright test its key in the project (its file, title path and
 * Playwright project), whichever suites select it; a step test its suite and key.
 */
export const testIdentity = (suite: string, key: string, playwright: boolean): string =>
  JSON.stringify(playwright ? ['playwright', key] : [suite, key]);

/** A file's test's identity ({@link testIdentity}), `suite` its suite's slug or id. */
export const identityOf = (suite: string, def: { key: string; steps: unknown }): string =>
  testIdentity(suite, def.key, isPlaywrightDefinition(def.steps));

/**
 * The suite and test rows of every suite slug and test key of the file, made where missing
 * (archived: not live until a version that has them is active), so each test has its id: by suite
 * slug and key, the test's id and the suite's (a Playwright test that several suites select has one
 * row, made in the first of them).
 */
export async function ensureRows(
  tx: DbTx,
  inProject: { workspaceId: string; projectId: string },
  file: ProjectFile,
): Promise<Map<string, { testId: string; suiteId: string }>> {
  const now = new Date();
  const suites = new Map(
    (await tx.suite.findMany({ where: { projectId: inProject.projectId }, select: { id: true, slug: true } })).map(
      (s) => [s.slug, s.id],
    ),
  );
  const newSuites = file.suites
    .map((s, position) => ({
      id: newId(ID_PREFIX.suite),
      ...inProject,
      slug: s.slug,
      name: s.name,
      position,
      archivedAt: now,
    }))
    .filter((s) => !suites.has(s.slug));
  if (newSuites.length > 0) await tx.suite.createMany({ data: newSuites });
  for (const s of newSuites) suites.set(s.slug, s.id);
  const known = await tx.$queryRaw<Array<{ id: string; key: string; suite_id: string; playwright: boolean }>>`
    SELECT id, key, suite_id, jsonb_typeof(steps) = 'object' AS playwright FROM tests
    WHERE project_id = ${inProject.projectId}`;
  const byIdentity = new Map(known.map((t) => [testIdentity(t.suite_id, t.key, t.playwright), t.id]));
  const out = new Map<string, { testId: string; suiteId: string }>();
  const newTests: Array<TestRecord & { id: string; suiteId: string }> = [];
  for (const suiteDef of file.suites) {
    const suiteId = suites.get(suiteDef.slug);
    if (!suiteId) throw new Error(`no row for suite ${suiteDef.slug}`);
    for (const [t, testDef] of suiteDef.tests.entries()) {
      const identity = identityOf(suiteId, testDef);
      let testId = byIdentity.get(identity);
      if (!testId) {
        testId = newId(ID_PREFIX.test);
        byIdentity.set(identity, testId);
        newTests.push({ id: testId, suiteId, ...testRecord(testDef, t) });
      }
      out.set(rowKey(suiteDef.slug, testDef.key), { testId, suiteId });
    }
  }
  await insertArchivedTests(tx, inProject, newTests);
  return out;
}
