import {
  readEvidenceSettings,
  resolveEvidence,
  type EvidenceSettings,
  type RunStatus,
  type SkipReason,
} from '@testrun/contracts';
import type { DbTx, Prisma } from './db';
import { ID_PREFIX, newId } from './ids';
import { deriveSuiteStatus } from './run-state';
import { sealHeaders } from './secrets';
import { sealRunVariables, type RunVariables } from './variables';

/** A test about to get a run: what the run snapshots at creation. */
export type PlannedTest = {
  id: string;
  projectId: string;
  name: string;
  enabled: boolean;
  timeoutMs: number;
  /** The test's steps as stored (a JSON array); the run keeps this snapshot. */
  steps: Prisma.JsonValue;
  /** The project's base URL, used unless the request overrides it. */
  baseUrl: string;
  /** The test's own evidence settings as stored (JSON, null when none). */
  evidence?: Prisma.JsonValue;
  /** The project's evidence settings as stored (JSON, null when none). */
  projectEvidence?: Prisma.JsonValue;
};

/** What one request creates: a suite run with its children when `suiteId` is set, loose runs otherwise. */
export type RunsToCreate = {
  workspaceId: string;
  /** The suite of a suite-mode request; `null` for single-test and project requests (no suite run). */
  suiteId: string | null;
  tests: PlannedTest[];
  /** Overrides every test's `baseUrl`. */
  baseUrl?: string | null;
  /** Sealed into each run that will execute, under `headersKey`. */
  headers?: Record<string, string> | null;
  /** The request's `variables` and `secretVariables`, sealed like the headers into each run that will execute. */
  variables?: RunVariables | null;
  /** The request's evidence settings: they win over the test's and the project's, key by key. */
  evidence?: EvidenceSettings | null;
  headersKey: Buffer;
};

export type CreatedRunRows = { suiteRunId: string | null; runIds: string[]; queuedRunIds: string[] };

export const QUEUED_SUMMARY = 'Queued; waiting for a worker.';
export const DISABLED_SUMMARY = 'Skipped: the test is disabled.';

/**
 * Writes the suite run (if any) and one run per test, in test order, with the counters set as the
 * children are: enabled tests `queued`, disabled ones `skipped` (`test_disabled`). The one place
 * runs are created, for the API and for tests; call it inside the request's transaction.
 */
export async function insertRuns(tx: DbTx, input: RunsToCreate): Promise<CreatedRunRows> {
  const { workspaceId, suiteId, tests } = input;
  const now = new Date();
  const queued = tests.filter((t) => t.enabled).length;
  const suiteRunId = suiteId === null ? null : newId(ID_PREFIX.suiteRun);
  if (suiteId !== null && suiteRunId !== null) {
    const counts = {
      total: tests.length,
      queued,
      running: 0,
      passed: 0,
      failed: 0,
      error: 0,
      skipped: tests.length - queued,
    };
    const status = deriveSuiteStatus(counts);
    await tx.suiteRun.create({
      data: {
        id: suiteRunId,
        workspaceId,
        suiteId,
        status,
        totalCount: counts.total,
        queuedCount: counts.queued,
        runningCount: 0,
        skippedCount: counts.skipped,
        // A child created skipped has already left `queued`, so the suite run has started.
        startedAt: status === 'queued' ? null : now,
        finishedAt: status === 'queued' || status === 'running' ? null : now,
      },
    });
  }
  const rows = tests.map((t, position) => {
    const id = newId(ID_PREFIX.run);
    const status: RunStatus = t.enabled ? 'queued' : 'skipped';
    return {
      id,
      workspaceId,
      projectId: t.projectId,
      testId: t.id,
      suiteRunId,
      position,
      status,
      baseUrl: input.baseUrl ?? t.baseUrl,
      // Headers only matter to a run that will execute; a skipped run never holds them.
      headersSealed:
        t.enabled && input.headers ? new Uint8Array(sealHeaders(input.headersKey, id, input.headers)) : null,
      variablesSealed:
        t.enabled && input.variables ? new Uint8Array(sealRunVariables(input.headersKey, id, input.variables)) : null,
      testName: t.name,
      steps: t.steps ?? [],
      timeoutMs: t.timeoutMs,
      evidence: runEvidence(t, input.evidence),
      resultSummary: t.enabled ? QUEUED_SUMMARY : DISABLED_SUMMARY,
      skipReason: t.enabled ? null : ('test_disabled' as const satisfies SkipReason),
      finishedAt: t.enabled ? null : now,
    };
  });
  await tx.run.createMany({ data: rows });
  return {
    suiteRunId,
    runIds: rows.map((r) => r.id),
    queuedRunIds: rows.filter((r) => r.status === 'queued').map((r) => r.id),
  };
}

/** The policy a run of `test` keeps evidence by: request > test > project > default, each key on its own. */
function runEvidence(test: PlannedTest, request: EvidenceSettings | null | undefined) {
  return resolveEvidence({
    project: readEvidenceSettings(test.projectEvidence),
    test: readEvidenceSettings(test.evidence),
    request,
  });
}

/** The columns that say how a run ended, as the API's Run and the view read them. */
export const RUN_OUTCOME_COLUMNS = {
  status: true,
  resultSummary: true,
  outcomeCode: true,
  outcomeMessage: true,
  outcomeStep: true,
  skipReason: true,
} as const satisfies Prisma.RunSelect;
