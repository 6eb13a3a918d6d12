import { isTerminalRunStatus } from '@testrun/contracts';
import { signViewToken, type Db, type DerivedKeys } from '@testrun/core';
import type { LiveStatus, ViewArtifact, ViewRun, ViewStep, ViewSuiteRun } from './model';

// An explicit column list: the view never reads headers_sealed, so header values cannot reach a page.
const RUN_COLUMNS = {
  id: true,
  suiteRunId: true,
  position: true,
  testName: true,
  status: true,
  resultSummary: true,
  outcomeCode: true,
  outcomeMessage: true,
  outcomeStep: true,
  skipReason: true,
  baseUrl: true,
  attempt: true,
  steps: true,
  createdAt: true,
  startedAt: true,
  finishedAt: true,
  durationMs: true,
} as const;

const STEP_COLUMNS = {
  runId: true,
  attempt: true,
  index: true,
  action: true,
  label: true,
  target: true,
  outcome: true,
  error: true,
  startedAt: true,
  durationMs: true,
  screenshotId: true,
} as const;

const ARTIFACT_COLUMNS = {
  id: true,
  runId: true,
  attempt: true,
  kind: true,
  stepIndex: true,
  name: true,
  contentType: true,
  sizeBytes: true,
} as const;

type RunRow = {
  id: string;
  suiteRunId: string | null;
  position: number;
  testName: string;
  status: ViewRun['status'];
  resultSummary: string;
  outcomeCode: string | null;
  outcomeMessage: string | null;
  outcomeStep: number | null;
  skipReason: string | null;
  baseUrl: string;
  attempt: number;
  steps: unknown;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  durationMs: number | null;
};

function toViewRun(keys: DerivedKeys, row: RunRow): ViewRun {
  const { steps, ...rest } = row;
  return {
    ...rest,
    token: signViewToken(keys.view, 'run', row.id),
    plannedSteps: Array.isArray(steps) ? steps.length : 0,
    steps: null,
    artifacts: null,
  };
}

/**
 * Attaches the steps and artifacts of each run's latest attempt. Only the runs given are loaded:
 * a suite page asks for the ones it shows open, so a 500-test suite of passes stays cheap.
 */
async function attachDetails(db: Db, runs: ViewRun[]): Promise<void> {
  const withAttempts = runs.filter((r) => r.attempt > 0);
  if (withAttempts.length === 0) {
    for (const r of runs) {
      r.steps = [];
      r.artifacts = [];
    }
    return;
  }
  const ids = withAttempts.map((r) => r.id);
  const [steps, artifacts] = await Promise.all([
    db.stepResult.findMany({
      where: { runId: { in: ids } },
      select: STEP_COLUMNS,
      orderBy: [{ runId: 'asc' }, { index: 'asc' }],
    }),
    db.artifact.findMany({
      where: { runId: { in: ids } },
      select: ARTIFACT_COLUMNS,
      orderBy: [{ runId: 'asc' }, { stepIndex: 'asc' }, { createdAt: 'asc' }],
    }),
  ]);
  const byId = new Map(runs.map((r) => [r.id, r]));
  for (const r of runs) {
    r.steps = [];
    r.artifacts = [];
  }
  for (const s of steps) {
    const run = byId.get(s.runId)!;
    if (s.attempt !== run.attempt) continue;
    const { runId: _runId, attempt: _attempt, ...step } = s;
    run.steps!.push(step satisfies ViewStep);
  }
  for (const a of artifacts) {
    const run = byId.get(a.runId)!;
    if (a.attempt !== run.attempt) continue;
    const { runId: _runId, attempt: _attempt, ...artifact } = a;
    run.artifacts!.push(artifact satisfies ViewArtifact);
  }
}

/** Whether a suite page renders a run's steps inline: everything except passes and skips. */
export function showsDetailsInline(run: Pick<ViewRun, 'status'>): boolean {
  return run.status !== 'passed' && run.status !== 'skipped';
}

export async function loadSuiteRun(db: Db, keys: DerivedKeys, suiteRunId: string): Promise<ViewSuiteRun | null> {
  const suiteRun = await db.suiteRun.findUnique({
    where: { id: suiteRunId },
    select: {
      id: true,
      status: true,
      totalCount: true,
      queuedCount: true,
      runningCount: true,
      passedCount: true,
      failedCount: true,
      errorCount: true,
      skippedCount: true,
      createdAt: true,
      startedAt: true,
      finishedAt: true,
      suite: { select: { name: true, slug: true, project: { select: { name: true, slug: true } } } },
    },
  });
  if (!suiteRun) return null;
  const rows = await db.run.findMany({ where: { suiteRunId }, select: RUN_COLUMNS, orderBy: { position: 'asc' } });
  const runs = rows.map((row) => toViewRun(keys, row));
  await attachDetails(db, runs.filter(showsDetailsInline));
  return {
    id: suiteRun.id,
    token: signViewToken(keys.view, 'suite-run', suiteRun.id),
    suiteName: suiteRun.suite.name,
    suiteSlug: suiteRun.suite.slug,
    projectName: suiteRun.suite.project.name,
    projectSlug: suiteRun.suite.project.slug,
    status: suiteRun.status,
    counts: {
      total: suiteRun.totalCount,
      queued: suiteRun.queuedCount,
      running: suiteRun.runningCount,
      passed: suiteRun.passedCount,
      failed: suiteRun.failedCount,
      error: suiteRun.errorCount,
      skipped: suiteRun.skippedCount,
    },
    createdAt: suiteRun.createdAt,
    startedAt: suiteRun.startedAt,
    finishedAt: suiteRun.finishedAt,
    runs,
  };
}

export async function loadRun(db: Db, keys: DerivedKeys, runId: string): Promise<ViewRun | null> {
  const row = await db.run.findUnique({ where: { id: runId }, select: RUN_COLUMNS });
  if (!row) return null;
  const run = toViewRun(keys, row);
  await attachDetails(db, [run]);
  return run;
}

export async function loadSuiteLiveStatus(db: Db, suiteRunId: string): Promise<LiveStatus | null> {
  const suiteRun = await db.suiteRun.findUnique({
    where: { id: suiteRunId },
    select: {
      status: true,
      totalCount: true,
      queuedCount: true,
      runningCount: true,
      passedCount: true,
      failedCount: true,
      errorCount: true,
      skippedCount: true,
    },
  });
  if (!suiteRun) return null;
  const runs = await db.run.findMany({
    where: { suiteRunId },
    select: { id: true, status: true, resultSummary: true, durationMs: true },
    orderBy: { position: 'asc' },
  });
  return {
    status: suiteRun.status,
    terminal: isTerminalRunStatus(suiteRun.status),
    counts: {
      total: suiteRun.totalCount,
      queued: suiteRun.queuedCount,
      running: suiteRun.runningCount,
      passed: suiteRun.passedCount,
      failed: suiteRun.failedCount,
      error: suiteRun.errorCount,
      skipped: suiteRun.skippedCount,
    },
    runs,
  };
}

export async function loadRunLiveStatus(db: Db, runId: string): Promise<LiveStatus | null> {
  const run = await db.run.findUnique({
    where: { id: runId },
    select: { id: true, status: true, resultSummary: true, durationMs: true },
  });
  if (!run) return null;
  return { status: run.status, terminal: isTerminalRunStatus(run.status), runs: [run] };
}

/** An artifact only when it belongs to the given run: the run's token never opens another run's files. */
export async function findRunArtifact(db: Db, runId: string, artifactId: string) {
  return db.artifact.findFirst({
    where: { id: artifactId, runId },
    select: { id: true, kind: true, name: true, storageKey: true, contentType: true, sizeBytes: true },
  });
}
