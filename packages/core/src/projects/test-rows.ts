import { evidenceSettingsOrNull, RETRY_LIMITS, STEP_LIMITS, type ProjectFile } from '@testrun/contracts';
import { Prisma, type DbTx } from '../db';
import { ID_PREFIX, newId } from '../ids';

// The writes of a version's tests, one statement for many rows: each reads the rows as one jsonb
// recordset. A project holds up to REQUEST_LIMITS.maxRunsPerRequest tests; Prisma's createMany and a
// statement per test spent seconds compiling and waiting on that many (5 of the 6 s a 5,000-test
// deployment took).

export type TestDefinition = ProjectFile['suites'][number]['tests'][number];

/** A test's columns as a project file defines them (its position given), JSON as stored (evidence null when none). */
export type TestRecord = {
  key: string;
  name: string;
  position: number;
  enabled: boolean;
  timeoutMs: number;
  retries: number;
  steps: TestDefinition['steps'];
  evidence: ReturnType<typeof evidenceSettingsOrNull>;
};

export function testRecord(def: TestDefinition, position: number): TestRecord {
  return {
    key: def.key,
    name: def.name,
    position,
    enabled: def.enabled ?? true,
    timeoutMs: def.timeoutMs ?? STEP_LIMITS.defaultTestTimeoutMs,
    retries: def.retries ?? RETRY_LIMITS.defaultRetries,
    steps: def.steps,
    evidence: evidenceSettingsOrNull(def.evidence),
  };
}

/** `records` as a recordset `v` of TestRecord's columns and `extra` ones (`name type, …`). */
const recordset = (records: object[], extra: Prisma.Sql) => Prisma.sql`
  jsonb_to_recordset(${JSON.stringify(records)}::jsonb) AS v(${extra}, key text, name text, position int,
    enabled boolean, "timeoutMs" int, retries int, steps jsonb, evidence jsonb)`;

/**
 * Makes a suite's tests the live rows of `defs` (in file order: position is the index): each key's
 * row is updated and un-archived, or created. Answers their ids in that order.
 */
export async function upsertLiveTests(
  tx: DbTx,
  inSuite: { workspaceId: string; projectId: string; suiteId: string },
  defs: TestDefinition[],
): Promise<Array<{ id: string; key: string; name: string }>> {
  if (defs.length === 0) return [];
  const records = defs.map((def, t) => ({ id: newId(ID_PREFIX.test), ...testRecord(def, t) }));
  const rows = await tx.$queryRaw<Array<{ id: string; key: string; name: string }>>`
    INSERT INTO tests AS t (id, workspace_id, project_id, suite_id, key, name, position, enabled, timeout_ms,
      retries, steps, evidence, archived_at, updated_at)
    SELECT v.id, ${inSuite.workspaceId}, ${inSuite.projectId}, ${inSuite.suiteId}, v.key, v.name, v.position,
      v.enabled, v."timeoutMs", v.retries, v.steps, v.evidence, NULL, now()
    FROM ${recordset(records, Prisma.sql`id text`)}
    ON CONFLICT (suite_id, key) DO UPDATE SET name = excluded.name, position = excluded.position,
      enabled = excluded.enabled, timeout_ms = excluded.timeout_ms, retries = excluded.retries,
      steps = excluded.steps, evidence = excluded.evidence, archived_at = NULL, updated_at = now()
    RETURNING t.id, t.key, t.name`;
  const byKey = new Map(rows.map((r) => [r.key, r]));
  return defs.map((def) => {
    const row = byKey.get(def.key);
    if (!row) throw new Error(`test ${def.key} was not stored`);
    return row;
  });
}

/**
 * Makes the project's Playwright tests the live rows of `tests` (each once, in the first suite that
 * selects it, at its position there): the row of each key in the project is updated and un-archived
 * (moved to that suite), or created. Answers their ids.
 */
export async function upsertLivePlaywrightTests(
  tx: DbTx,
  inProject: { workspaceId: string; projectId: string },
  tests: Array<{ suiteId: string; def: TestDefinition; position: number }>,
): Promise<Array<{ id: string; key: string; name: string }>> {
  if (tests.length === 0) return [];
  const records = tests.map((t) => ({
    id: newId(ID_PREFIX.test),
    suiteId: t.suiteId,
    ...testRecord(t.def, t.position),
  }));
  return tx.$queryRaw<Array<{ id: string; key: string; name: string }>>`
    WITH v AS (SELECT * FROM ${recordset(records, Prisma.sql`id text, "suiteId" text`)}),
    updated AS (
      UPDATE tests t SET suite_id = v."suiteId", name = v.name, position = v.position, enabled = v.enabled,
        timeout_ms = v."timeoutMs", retries = v.retries, steps = v.steps, evidence = v.evidence, archived_at = NULL,
        updated_at = now()
      FROM v WHERE t.project_id = ${inProject.projectId} AND t.key = v.key AND jsonb_typeof(t.steps) = 'object'
      RETURNING t.id, t.key, t.name),
    inserted AS (
      INSERT INTO tests (id, workspace_id, project_id, suite_id, key, name, position, enabled, timeout_ms, retries,
        steps, evidence, archived_at, updated_at)
      SELECT v.id, ${inProject.workspaceId}, ${inProject.projectId}, v."suiteId", v.key, v.name, v.position, v.enabled,
        v."timeoutMs", v.retries, v.steps, v.evidence, NULL, now()
      FROM v WHERE NOT EXISTS (SELECT 1 FROM tests t WHERE t.project_id = ${inProject.projectId} AND t.key = v.key
        AND jsonb_typeof(t.steps) = 'object')
      RETURNING id, key, name)
    SELECT * FROM updated UNION ALL SELECT * FROM inserted`;
}

/** Creates test rows archived (not live until a version that has them is active). */
export async function insertArchivedTests(
  tx: DbTx,
  inProject: { workspaceId: string; projectId: string },
  rows: Array<TestRecord & { id: string; suiteId: string }>,
): Promise<void> {
  if (rows.length === 0) return;
  await tx.$executeRaw`
    INSERT INTO tests (id, workspace_id, project_id, suite_id, key, name, position, enabled, timeout_ms,
      retries, steps, evidence, archived_at)
    SELECT v.id, ${inProject.workspaceId}, ${inProject.projectId}, v."suiteId", v.key, v.name, v.position,
      v.enabled, v."timeoutMs", v.retries, v.steps, v.evidence, now()
    FROM ${recordset(rows, Prisma.sql`id text, "suiteId" text`)}`;
}

/**
 * A deployment's snapshot of its tests, one row per suite that selects a test (position: the row's
 * order in the whole file).
 */
export async function insertDeploymentTests(
  tx: DbTx,
  deploymentId: string,
  rows: Array<TestRecord & { testId: string; suiteId: string; suiteSlug: string }>,
): Promise<void> {
  if (rows.length === 0) return;
  await tx.$executeRaw`
    INSERT INTO deployment_tests (deployment_id, test_id, suite_id, suite_slug, key, name, enabled, position,
      steps, timeout_ms, evidence, retries)
    SELECT ${deploymentId}, v."testId", v."suiteId", v."suiteSlug", v.key, v.name, v.enabled, v.position,
      v.steps, v."timeoutMs", v.evidence, v.retries
    FROM ${recordset(rows, Prisma.sql`"testId" text, "suiteId" text, "suiteSlug" text`)}`;
}
