import {
  isPlaywrightDefinition,
  type PlaywrightDefinition,
  type DeploymentChanges,
  type DeploymentTestKey,
  type ProjectFile,
} from '@testrun/contracts';
import type { DbTx } from '../db';
import { identityOf, type LockedProject } from './rows';
import { testRecord } from './test-rows';

// What a version changes against the active one: tests added, removed and changed, each test once
// (a Playwright test that several suites select is one test, named by the first of them). A
// Playwright test changed when its own definition or source did: not when only its bundle did (a
// sibling in its file, another file) or its line moved.

/** A test as a version defines it: what a run snapshots. */
export type Definition = { suiteSlug: string; key: string; identity: string; record: Snapshot };

/** What a run of a test snapshots. */
type Snapshot = {
  name: string;
  enabled: boolean;
  steps: unknown;
  timeoutMs: number;
  evidence: unknown;
  retries: number;
};

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
        FROM deployment_tests WHERE deployment_id = ${project.active.id} ORDER BY position`
    : await tx.$queryRaw<Row[]>`
        SELECT s.slug AS suite_slug, t.key, t.name, t.enabled, t.steps, t.timeout_ms, t.evidence, t.retries
        FROM tests t JOIN suites s ON s.id = t.suite_id
        WHERE t.project_id = ${project.id} AND t.archived_at IS NULL AND s.archived_at IS NULL
        ORDER BY s.position, t.position`;
  const seen = new Set<string>();
  const once = rows.filter((r) => {
    const identity = identityOf(r.suite_slug, r);
    return !seen.has(identity) && seen.add(identity);
  });
  return once.map((r) => ({
    suiteSlug: r.suite_slug,
    key: r.key,
    identity: identityOf(r.suite_slug, r),
    record: {
      name: r.name,
      enabled: r.enabled,
      steps: r.steps,
      timeoutMs: r.timeout_ms,
      evidence: r.evidence,
      retries: r.retries,
    },
  }));
}

/** Tests added, removed and changed from `current` to `planned`, each test once. */
export function changesOf(current: Definition[], planned: PlannedTest[]): DeploymentChanges {
  const before = new Map(current.map((d) => [d.identity, d]));
  const after = new Set<string>();
  const changes: DeploymentChanges = { added: [], removed: [], changed: [] };
  for (const t of planned) {
    const identity = identityOf(t.suiteSlug, t.def);
    if (after.has(identity)) continue;
    after.add(identity);
    const name = changeKey(t.suiteSlug, t.def.key, t.def.name, t.def.steps);
    const was = before.get(identity);
    const now = testRecord(t.def, 0);
    if (!was) changes.added.push(name);
    else if (fingerprint(was.record, now) !== fingerprint(now, was.record)) changes.changed.push(name);
  }
  for (const d of current) {
    if (!after.has(d.identity)) changes.removed.push(changeKey(d.suiteSlug, d.key, d.record.name, d.record.steps));
  }
  return changes;
}

/** A test as a change names it: suite and key, with its name and, for a Playwright test, where it is declared. */
function changeKey(suiteSlug: string, key: string, name: string, steps: unknown): DeploymentTestKey {
  const location = deploymentLocation(steps);
  return { suiteSlug, key, name, ...(location ? { location } : {}) };
}

/** A Playwright test's file, line, project and title path, from its definition; null for a step test. */
export function deploymentLocation(steps: unknown): NonNullable<DeploymentTestKey['location']> | null {
  if (!isPlaywrightDefinition(steps)) return null;
  const { file, line, project, titlePath } = steps.playwright;
  return { file, line, project, titlePath };
}

/**
 * What a run of a test snapshots, as one string whatever the order of JSON keys (jsonb reorders
 * them), to compare with `other`. Of two Playwright definitions that both have a source digest, only
 * what is the test's own: not its bundle, line and column. Without a digest on either side (a file
 * too large to read, a version deployed before digests were kept), the whole definition.
 */
function fingerprint(def: Snapshot, other: Snapshot): string {
  const steps = isPlaywrightDefinition(def.steps) ? ownDefinition(def.steps, other.steps) : def.steps;
  return canonical([def.name, def.enabled, steps, def.timeoutMs, def.evidence ?? null, def.retries]);
}

function ownDefinition({ playwright }: PlaywrightDefinition, other: unknown): unknown {
  const digested =
    playwright.source !== undefined && isPlaywrightDefinition(other) && other.playwright.source !== undefined;
  if (!digested) return { ...playwright, source: undefined };
  const { bundle: _bundle, line: _line, column: _column, ...own } = playwright;
  return own;
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
