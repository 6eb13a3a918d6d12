import {
  isTerminalRunStatus,
  type Run,
  type RunError,
  type RunStatus,
  type SkipReason,
  type SuiteRun,
  type SuiteRunStatus,
} from '@testrun/contracts';
import { aggregateStatus, countStatuses, type StatusCounts } from '@testrun/client';

/** Exit codes of `testrun run` / `testrun status`. */
export const EXIT = {
  passed: 0,
  failed: 1,
  /** error, skipped only, wait budget exceeded, usage or API error. */
  error: 2,
  /** `testrun status` only: the run or suite run is not finished yet. */
  pending: 3,
} as const;

/** One test of a report. */
export interface ReportTest {
  runId: string;
  name: string;
  status: RunStatus;
  result_summary: string | null;
  error: RunError | null;
  skip_reason: SkipReason | null;
  /** Link to the detailed view of this run, when the API gave one. */
  viewUrl: string | null;
  /** Observed by polling (first seen running → first seen terminal); null when not observed. */
  durationMs: number | null;
}

/** What `testrun run` found out: the document printed by `--json` and the source of JUnit. */
export interface Report {
  kind: 'test' | 'suite' | 'project';
  /** Project slug / suite slug / test id, for names and JUnit classnames. */
  project: string | null;
  suite: string | null;
  testId: string | null;
  suiteRunId: string | null;
  runIds: string[];
  suiteRunUrl: string | null;
  status: SuiteRunStatus;
  counts: StatusCounts;
  tests: ReportTest[];
  /** True when the wait budget ran out before everything was terminal. */
  timedOut: boolean;
  /** Wall time of the wait, in ms. */
  durationMs: number;
  exitCode: number;
  /** One line that says why the command exits the way it does. */
  message: string;
}

/** The exit code for a final status, by the rule 0 passed, 1 failed, 2 anything else. */
export function exitCodeFor(status: SuiteRunStatus, timedOut: boolean): number {
  if (timedOut) return EXIT.error;
  if (status === 'passed') return EXIT.passed;
  if (status === 'failed') return EXIT.failed;
  return EXIT.error;
}

/** Tracks when each run was first seen running and first seen terminal, across polls. */
export class DurationTracker {
  private readonly started = new Map<string, number>();
  private readonly ended = new Map<string, number>();
  constructor(private readonly now: () => number = Date.now) {}

  observe(runId: string, status: RunStatus): void {
    const t = this.now();
    if (status === 'running' && !this.started.has(runId)) this.started.set(runId, t);
    if (isTerminalRunStatus(status) && !this.ended.has(runId)) this.ended.set(runId, t);
  }

  durationOf(runId: string): number | null {
    const s = this.started.get(runId);
    const e = this.ended.get(runId);
    return s !== undefined && e !== undefined ? e - s : null;
  }
}

/** Report tests from a suite run's test entries. */
export function testsFromSuiteRun(suiteRun: SuiteRun, durations: DurationTracker): ReportTest[] {
  return suiteRun.tests.map((t) => ({
    runId: t.runId,
    name: t.name,
    status: t.status,
    result_summary: null,
    error: null,
    skip_reason: t.skipReason,
    viewUrl: null,
    durationMs: durations.durationOf(t.runId),
  }));
}

/** Report tests from runs (test and project mode, where the API gives no test names: `names` supplies them). */
export function testsFromRuns(
  runs: readonly Run[],
  names: (run: Run) => string,
  durations: DurationTracker,
): ReportTest[] {
  return runs.map((r) => ({
    runId: r.id,
    name: names(r),
    status: r.status,
    result_summary: r.result_summary,
    error: r.error,
    skip_reason: r.skip_reason,
    viewUrl: null,
    durationMs: durations.durationOf(r.id),
  }));
}

/** Counts and aggregate status of a list of report tests, by the suite rule. */
export function summarize(tests: readonly ReportTest[]): { counts: StatusCounts; status: SuiteRunStatus } {
  const statuses = tests.map((t) => t.status);
  return { counts: countStatuses(statuses), status: aggregateStatus(statuses) };
}

/** The closing line for people: the verdict and the counts. */
export function verdictLine(report: Pick<Report, 'kind' | 'status' | 'counts' | 'timedOut'>, budget: string): string {
  const c = report.counts;
  const finished = c.passed + c.failed + c.error + c.skipped;
  const counts = `${c.passed} passed, ${c.failed} failed, ${c.error} error, ${c.skipped} skipped (${finished}/${c.total} finished)`;
  if (report.timedOut)
    return `Wait budget of ${budget} exceeded before the ${report.kind} finished: ${counts}. The runs continue on the service.`;
  const why: Record<string, string> = {
    passed: 'passed',
    failed: 'failed',
    error: 'ended in error (the runs could not complete)',
    skipped: 'was skipped entirely (nothing ran)',
  };
  return `The ${report.kind} ${why[report.status] ?? report.status}: ${counts}.`;
}
