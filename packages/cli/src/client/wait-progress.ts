import { countStatuses } from '@testrun/client';
import type {
  QueueWait,
  ReportCounts,
  ReportSetupTest,
  ReportTest,
  Run,
  RunCreateResponse,
  SuiteRun,
  SuiteRunStatus,
} from '@testrun/contracts';
import { bareTest, setupTestsOf, suiteCounts, summarize, testsFromRuns, testsFromSuiteRun } from './report';

/** The ids a 201 answer of an enqueue gives, by mode. */
export function enqueuedIds(body: RunCreateResponse): { suiteRunId: string | null; runIds: string[] } {
  if ('suiteRunId' in body) return { suiteRunId: body.suiteRunId, runIds: [] };
  if ('runIds' in body) return { suiteRunId: null, runIds: body.runIds };
  return { suiteRunId: null, runIds: [body.runId] };
}

/** What the line that names an enqueue adds when the service replayed an earlier answer to the key. */
export function replayedNote(replayed: boolean): string {
  return replayed ? ' (replayed: this key was already used, nothing new was enqueued)' : '';
}

/** How a {@link WaitProgress} shows itself: `testrun run` redraws its table, the action logs finished tests. */
export interface WaitProgressView {
  /** The first poll of a suite run gave its link. */
  suiteRunUrl(url: string): void;
  /** A poll changed the state (called after each one). */
  changed(progress: WaitProgress): void;
}

/**
 * What the polls of one wait have shown so far, for `testrun run`, `testrun rerun` and the GitHub
 * Action alike: pass `onSuiteRun` or `onRuns` as the wait's `onProgress`.
 */
export class WaitProgress {
  tests: ReportTest[] = [];
  /** The suite run's setup tests, or those of runs outside a suite run (not among `tests`, nor in `counts`). */
  setupTests: ReportSetupTest[] = [];
  counts: ReportCounts = countStatuses([]);
  status: SuiteRunStatus = 'queued';
  suiteRunUrl: string | null = null;
  /** The service's account of the wait in the queue: the suite run's, or the first run's; null when it gives none. */
  wait: QueueWait | null = null;

  constructor(private readonly view: WaitProgressView) {}

  readonly onSuiteRun = (s: SuiteRun): void => {
    if (this.suiteRunUrl === null) this.view.suiteRunUrl(s.suiteRunUrl);
    this.suiteRunUrl = s.suiteRunUrl;
    this.tests = testsFromSuiteRun(s);
    this.setupTests = setupTestsOf(s);
    this.counts = suiteCounts(s, this.tests);
    this.status = s.status;
    this.wait = s.queue_wait ?? null;
    this.view.changed(this);
  };

  readonly onRuns = (runs: readonly Run[]): void => {
    this.tests = testsFromRuns(runs);
    // A run outside a suite run has its own setup tests (linked from the run's page once the CLI reads its link).
    this.setupTests = runs.flatMap((r) => (r.setup_tests ?? []).map((t) => ({ ...t, viewUrl: null })));
    ({ counts: this.counts, status: this.status } = summarize(this.tests));
    this.wait = runs[0]?.queue_wait ?? null;
    this.view.changed(this);
  };

  /**
   * The wait ran out: when no poll answered in time, in test and project mode every run counts as
   * still queued, and without an answer its test's name is unknown, so the id stands in for it (the
   * test's id in test mode).
   */
  timedOut(target: { kind: 'test' | 'suite' | 'project'; testId?: string | null }, runIds: readonly string[]): void {
    if (this.tests.length > 0 || target.kind === 'suite') return;
    this.tests = runIds.map((id) => bareTest(id, target.kind === 'test' ? (target.testId ?? '') : id, 'queued'));
    ({ counts: this.counts, status: this.status } = summarize(this.tests));
  }
}
