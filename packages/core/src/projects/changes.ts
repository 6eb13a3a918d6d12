import type { DeploymentChanges, DeploymentTestKey, ProjectFile } from '@testrun/contracts';
import type { DbTx } from '../db';
import { rowKey, type LockedProject } from './rows';
import { testRecord } from './test-rows';

// What a version changes against the active one: test keys added, removed and changed.

/** A test as a version defines it, by what a run snapshots. */
export type Definition = { suiteSlug: string; key: string; fingerprint: string };

export type PlannedTest = { suiteSlug: string; def: ProjectFile['suites'][number]['tests'][number] };

export function plannedTests(file: ProjectFile): PlannedTest[] {
  return file.suites.flatMap((s) => s.tests.map((def) => ({ suiteSlug: s.slug, def })));
}

/** The tests of the active version (its deployment's, else the live rows of a project from before deployments). */
export async function activeDefinitions(tx: DbTx, project: LockedProject): Promise<Definition[]> {
  type Row = {
    suite_slug: string;
    key: string;
    name: string;
    enabled: boolean;
    steps: unknown;
    timeout_ms: number;
    evidence: unknown;
    retries: number;
  };
  const rows = project.active
    ? await tx.$queryRaw<Row[]>`
        SELECT suite_slug, key, name, enabled, steps, timeout_ms, evidence, retries
        FROM deployment_tests WHERE deployment_id = ${project.active.id}`
    : await tx.$queryRaw<Row[]>`
        SELECT s.slug AS suite_slug, t.key, t.name, t.enabled, t.steps, t.timeout_ms, t.evidence, t.retries
        FROM tests t JOIN suites s ON s.id = t.suite_id
        WHERE t.project_id = ${project.id} AND t.archived_at IS NULL AND s.archived_at IS NULL`;
  return rows.map((r) => ({
    suiteSlug: r.suite_slug,
    key: r.key,
    fingerprint: fingerprint({
      name: r.name,
      enabled: r.enabled,
      steps: r.steps,
      timeoutMs: r.timeout_ms,
      evidence: r.evidence,
      retries: r.retries,
    }),
  }));
}

/** Test keys added, removed and changed from `current` to `planned`. */
export function changesOf(current: Definition[], planned: PlannedTest[]): DeploymentChanges {
  const before = new Map(current.map((d) => [rowKey(d.suiteSlug, d.key), d]));
  const after = new Set<string>();
  const changes: DeploymentChanges = { added: [], removed: [], changed: [] };
  for (const t of planned) {
    const at = rowKey(t.suiteSlug, t.def.key);
    after.add(at);
    const name: DeploymentTestKey = { suiteSlug: t.suiteSlug, key: t.def.key };
    const was = before.get(at);
    const now = fingerprint(testRecord(t.def, 0));
    if (!was) changes.added.push(name);
    else if (was.fingerprint !== now) changes.changed.push(name);
  }
  for (const d of current) {
    if (!after.has(rowKey(d.suiteSlug, d.key))) changes.removed.push({ suiteSlug: d.suiteSlug, key: d.key });
  }
  return changes;
}

/** What a run of a test snapshots, as one string whatever the order of JSON keys (jsonb reorders them). */
function fingerprint(def: {
  name: string;
  enabled: boolean;
  steps: unknown;
  timeoutMs: number;
  evidence: unknown;
  retries: number;
}): string {
  return canonical([def.name, def.enabled, def.steps, def.timeoutMs, def.evidence ?? null, def.retries]);
}

export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
