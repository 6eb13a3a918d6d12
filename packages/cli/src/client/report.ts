import {
  CLI_EXIT_CODES,
  type CliExitCode,
  type ReportCounts,
  type ReportSetupTest,
  type ReportTest,
  type Run,
  type RunReport,
  type RunStatus,
  type SuiteRun,
  type SuiteRunStatus,
} from '@testrun/contracts';
import { aggregateStatus, countStatuses, isTransientError, type TestrunClient } from '@testrun/client';
import { changedScreenshots, noteVisualChanges } from './visual-notes';

/** Exit codes of `testrun run` / `testrun status` (the contracts' `CLI_EXIT_CODES`). */
export const EXIT = CLI_EXIT_CODES;

/** The exit code for a final status, by the rule 0 passed, 1 failed, 2 anything else. */
export function exitCodeFor(status: SuiteRunStatus, timedOut: boolean): CliExitCode {
  if (timedOut) return EXIT.error;
  if (status === 'passed') return EXIT.passed;
  if (status === 'failed') return EXIT.failed;
  return EXIT.error;
}

/** A report test of a run not read yet (or read without details): only its id, name and status. */
export function bareTest(runId: string, name: string, status: RunStatus, durationMs: number | null = null): ReportTest {
  return {
    runId,
    name,
    status,
    result_summary: null,
    error: null,
    skip_reason: null,
    flaky: false,
    attempts: 0,
    previous_attempts: [],
    viewUrl: null,
    durationMs,
  };
}

/** Report tests from a suite run's test entries; durations are the service's own (`durationMs`). */
export function testsFromSuiteRun(suiteRun: SuiteRun): ReportTest[] {
  return suiteRun.tests.map((t) => ({
    ...bareTest(t.runId, t.name, t.status, t.durationMs),
    skip_reason: t.skipReason,
    flaky: t.flaky,
    attempts: t.attempts,
    ...(t.location ? { location: t.location } : {}),
    ...(t.attachmentCount ? { attachmentCount: t.attachmentCount } : {}),
  }));
}

/** A suite run's setup tests, each with its link on the suite run's page. */
export function setupTestsOf(suiteRun: SuiteRun): ReportSetupTest[] {
  return (suiteRun.setup_tests ?? []).map((t) => ({ ...t, viewUrl: `${suiteRun.suiteRunUrl}#setup-${t.id}` }));
}

/**
 * A setup test as people read it, as Playwright's list reporter names a test with its project:
 * `[setup] › e2e/auth.setup.ts › signs in`.
 */
export function setupDisplayName(t: Pick<ReportSetupTest, 'location'>): string {
  return [`[${t.location.project}]`, t.location.file, ...t.location.titlePath].join(' › ');
}

/** The closing lines of the setup tests that failed or ended in error, as a test's, with their link. */
export function setupClosingLines(setups: readonly ReportSetupTest[]): string[] {
  return setups.flatMap((t) => {
    if (t.status !== 'failed' && t.status !== 'error') return [];
    const mark = t.status === 'failed' ? 'FAILED' : 'ERROR ';
    const [first, ...more] = errorLines(t);
    const link = t.viewUrl ? `\n        ${t.viewUrl}` : '';
    return [`${mark} ${setupDisplayName(t)}: ${first}${more.map((line) => `\n        ${line}`).join('')}${link}`];
  });
}

/** "; setup tests: 2 passed, 1 failed" after the verdict's counts when the suite run had some; empty otherwise. */
function setupNote(setups: readonly ReportSetupTest[] | undefined): string {
  if (!setups || setups.length === 0) return '';
  const c = countStatuses(setups.map((t) => t.status));
  const parts = (['passed', 'failed', 'error', 'skipped'] as const).filter((k) => c[k] > 0).map((k) => `${c[k]} ${k}`);
  return `; setup tests (not counted): ${parts.join(', ')}`;
}

/**
 * Report tests from runs (test and project mode), named by their test's name as suite mode names
 * them; durations are the service's own (`duration_ms`).
 */
export function testsFromRuns(runs: readonly Run[]): ReportTest[] {
  return runs.map((r) => {
    const t: ReportTest = {
      ...bareTest(r.id, r.test_name, r.status, r.duration_ms),
      result_summary: r.result_summary,
      error: r.error,
      skip_reason: r.skip_reason,
      flaky: r.flaky,
      attempts: r.attempts,
      previous_attempts: r.previous_attempts,
      ...(r.location ? { location: r.location } : {}),
      ...(r.failure ? { failure: r.failure } : {}),
      ...(r.attachments ? { attachments: r.attachments } : {}),
    };
    noteVisualChanges(t, r.visual_changes);
    return t;
  });
}

/**
 * A test as people read it: a Playwright test's `file › describe › title` (as Playwright's list
 * reporter prints it), else its name.
 */
export function displayName(t: Pick<ReportTest, 'name' | 'location'>): string {
  return t.location ? [t.location.file, ...t.location.titlePath].join(' › ') : t.name;
}

/** The first lines of a test's error, for the closing lines: its summary, then the error's message if it says more. */
function errorLines(
  t: Pick<ReportTest, 'result_summary' | 'error' | 'status'> & { failure?: ReportTest['failure'] },
  max = 10,
): string[] {
  const text = [t.result_summary ?? t.status, fullError(t)].filter(Boolean).join('\n');
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return lines.length > max
    ? [
        ...lines.slice(0, max),
        `… (${lines.length - max} more ${lines.length - max === 1 ? 'line' : 'lines'} in the view)`,
      ]
    : lines;
}

/**
 * A test's error in full when it says more than its summary: a failed run's failing step (a
 * Playwright expectation's message, with expected and received), an error run's message; else ''.
 */
export function fullError(
  t: Pick<ReportTest, 'result_summary' | 'error'> & { failure?: ReportTest['failure'] },
): string {
  const message = t.failure?.message ?? t.error?.message ?? '';
  return t.result_summary?.endsWith(message.trim()) ? '' : message;
}

/** "passed on retry 1": which retry a flaky run passed on (its attempts count the first one too). */
export function passedOnRetry(run: { attempts: number }): string {
  return run.attempts > 1 ? `passed on retry ${run.attempts - 1}` : 'passed on a retry';
}

/**
 * `(flaky: passed on retry 1)` for a run that passed only on a retry, so a flaky pass never reads
 * as a healthy one wherever its status is shown; empty otherwise.
 */
export function flakyMark(run: { flaky: boolean; attempts: number }): string {
  return run.flaky ? `(flaky: ${passedOnRetry(run)})` : '';
}

/** A run's status for people: `passed (flaky: passed on retry 1)`, else the bare status. */
export function statusText(run: { status: RunStatus; flaky: boolean; attempts: number }): string {
  const mark = flakyMark(run);
  return mark ? `${run.status} ${mark}` : run.status;
}

/** Counts and aggregate status of a list of report tests, by the suite rule. */
export function summarize(tests: readonly ReportTest[]): { counts: ReportCounts; status: SuiteRunStatus } {
  const statuses = tests.map((t) => t.status);
  return { counts: countStatuses(statuses), status: aggregateStatus(statuses) };
}

const VERDICT: Record<SuiteRunStatus, string> = {
  passed: 'passed',
  failed: 'failed',
  error: 'ended in error (the runs could not complete)',
  skipped: 'was skipped entirely (nothing ran)',
  queued: 'is still queued',
  running: 'is still running',
};

/** The closing line for people: the verdict and the counts. */
export function verdictLine(
  report: Pick<RunReport, 'kind' | 'status' | 'counts' | 'timedOut' | 'tests' | 'setupTests'>,
  budget: string,
): string {
  const c = report.counts;
  const finished = c.passed + c.failed + c.error + c.skipped;
  const counts = `${c.passed} passed${flakyNote(report.tests)}, ${c.failed} failed, ${c.error} error, ${c.skipped} skipped (${finished}/${c.total} finished)${setupNote(report.setupTests)}`;
  if (report.timedOut)
    return `Wait budget of ${budget} exceeded before the ${report.kind} finished: ${counts}. The runs continue on the service.`;
  return `The ${report.kind} ${VERDICT[report.status]}: ${counts}.`;
}

/** How many of the tests are flaky: the count of tests that passed only on a retry. */
export function flakyCount(tests: readonly ReportTest[]): number {
  return tests.filter((t) => t.flaky).length;
}

/** ` (1 flaky)` after the passed count when some passed only on a retry; empty otherwise. */
function flakyNote(tests: readonly ReportTest[]): string {
  const flaky = flakyCount(tests);
  return flaky > 0 ? ` (${flaky} flaky)` : '';
}

/**
 * The lines after the wait, one per test that did not pass cleanly: `FAILED` and `ERROR ` with the
 * run's summary, `FLAKY ` with the retry it passed on and what the attempts before it said; each
 * with its view link when known.
 */
export function closingLines(tests: readonly ReportTest[]): string[] {
  return tests.flatMap((t) => {
    const link = t.viewUrl ? `\n        ${t.viewUrl}` : '';
    if (t.status === 'failed' || t.status === 'error') {
      const mark = t.status === 'failed' ? 'FAILED' : 'ERROR ';
      // A screenshot that differs from its baseline says so first, and how to approve it last.
      const screenshots = changedScreenshots(t);
      const lines = screenshots ? [screenshots.note, ...errorLines(t), screenshots.hint] : errorLines(t);
      const [first, ...more] = lines;
      return [`${mark} ${displayName(t)}: ${first}${more.map((line) => `\n        ${line}`).join('')}${link}`];
    }
    if (!t.flaky) return [];
    const earlier = t.previous_attempts.map((a) => `; attempt ${a.attempt} ${a.status}: ${a.result_summary}`);
    return [`FLAKY  ${displayName(t)}: ${statusText(t)}${earlier.join('')}${link}`];
  });
}

/** A suite run's counters for a report: the service's finished counts, and queued/running from its entries. */
export function suiteCounts(s: SuiteRun, tests: readonly ReportTest[]): ReportCounts {
  const live = countStatuses(tests.map((t) => t.status));
  return {
    total: s.total_count,
    queued: live.queued,
    running: live.running,
    passed: s.passed_count,
    failed: s.failed_count,
    error: s.error_count,
    skipped: s.skipped_count,
  };
}

/** How many runs {@link addDetails} reads at once. */
const DETAIL_READS_AT_ONCE = 4;

/**
 * Whether a test's run is read for details: one that did not pass or passed only on a retry, and,
 * when the output lists attachments (`--junit`, `--json`), one that attached files.
 */
function wantsDetails(t: ReportTest, attachments: boolean): boolean {
  if (t.status === 'failed' || t.status === 'error' || t.flaky) return true;
  return attachments && (t.attachmentCount ?? 0) > 0;
}

/**
 * Adds result summaries, error details, earlier attempts and view links of the tests that did not
 * pass or passed only on a retry, and with `attachments` the attachments (and view link) of every
 * test that attached files (one GET each, at most {@link DETAIL_READS_AT_ONCE} at a time).
 */
export async function addDetails(
  client: TestrunClient,
  tests: ReportTest[],
  options: { attachments?: boolean } = {},
): Promise<void> {
  const queue = tests.filter((t) => wantsDetails(t, options.attachments ?? false));
  const reader = async () => {
    for (let t = queue.shift(); t !== undefined; t = queue.shift()) await addRunDetails(client, t);
  };
  await Promise.all(Array.from({ length: Math.min(DETAIL_READS_AT_ONCE, queue.length) }, reader));
}

async function addRunDetails(client: TestrunClient, t: ReportTest): Promise<void> {
  try {
    const { run, viewUrl } = await client.getRunWithLink(t.runId);
    t.result_summary = run.result_summary;
    t.error = run.error;
    t.flaky = run.flaky;
    t.attempts = run.attempts;
    t.previous_attempts = run.previous_attempts;
    t.viewUrl = viewUrl;
    if (run.failure) t.failure = run.failure;
    if (run.attachments) t.attachments = run.attachments;
    noteVisualChanges(t, run.visual_changes);
  } catch (e) {
    // The verdict is known already; details are a courtesy the API may be too busy to give.
    if (!isTransientError(e)) throw e;
  }
}
