import type { ReportTest, VisualChange } from '@testrun/contracts';

// What `testrun run` (and the action) say of visual comparison: a run that failed on a screenshot
// that differs from its baseline, and runs that passed with new baselines awaiting approval, each
// with the `testrun approve` command that makes the images the baselines. A report's test carries
// its run's `visual_changes` when the CLI read the run: every run of a poll in project and
// single-test mode, and in suite mode the runs it reads for details.

/** Keeps the visual changes of the run `t` was read from on it (nothing when it has none). */
export function noteVisualChanges(t: ReportTest, changes: readonly VisualChange[] | undefined): void {
  if (changes && changes.length > 0) t.visual_changes = [...changes];
}

/** The changes of `t`'s run not yet approved, of one kind. */
function awaiting(t: ReportTest, kind: VisualChange['kind']): readonly VisualChange[] {
  return (t.visual_changes ?? []).filter((c) => c.kind === kind && !c.approved);
}

/** `home.png, heading.png` (the first five, then how many more). */
function names(changes: readonly VisualChange[]): string {
  const listed = changes.slice(0, 5).map((c) => c.name);
  return changes.length > 5 ? `${listed.join(', ')} and ${changes.length - 5} more` : listed.join(', ');
}

/** The command that approves a run's changes, or a suite run's. */
function approveCommand(target: { runId: string } | { suiteRunId: string }): string {
  return 'runId' in target
    ? `testrun approve --run ${target.runId}`
    : `testrun approve --suite-run ${target.suiteRunId}`;
}

/**
 * For a failed test whose run found screenshots that differ from their baselines: the words that
 * say so (`Screenshot changed: home.png`) and the line that says how to approve them; null otherwise.
 */
export function changedScreenshots(t: ReportTest): { note: string; hint: string } | null {
  const changed = awaiting(t, 'changed');
  if (t.status !== 'failed' || changed.length === 0) return null;
  return {
    note: `Screenshot changed: ${names(changed)}`,
    hint: `If the change is intended, make it the baseline: ${approveCommand({ runId: t.runId })}`,
  };
}

/**
 * One line when tests passed with new baselines awaiting approval (their snapshots had none): how
 * many, which, and the command that approves them: the suite run's when that approves nothing else
 * (no test that did not pass has a change awaiting approval), else each run's; null when none.
 */
export function newBaselinesHint(tests: readonly ReportTest[], suiteRunId: string | null): string | null {
  const fresh = tests.filter((t) => t.status === 'passed' && awaiting(t, 'new').length > 0);
  const [first] = fresh;
  if (first === undefined) return null;
  const images = fresh.flatMap((t) => awaiting(t, 'new'));
  const others = tests.some((t) => t.status !== 'passed' && (t.visual_changes ?? []).some((c) => !c.approved));
  const command =
    suiteRunId !== null && !others
      ? approveCommand({ suiteRunId })
      : fresh.length === 1
        ? approveCommand({ runId: first.runId })
        : `testrun approve --run <id>, for ${fresh.map((t) => t.runId).join(', ')}`;
  const count = fresh.length === 1 ? '1 test' : `${fresh.length} tests`;
  return `${count} passed with new baselines awaiting approval (${names(images)}); approve them: ${command}`;
}
