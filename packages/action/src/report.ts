import * as core from '@actions/core';
import type { ReportCounts } from '@testrun/contracts';
import { flakyCount } from '@testrun/cli/ci';
import { exitCodeOf, messageOf, verdictOf, type Outcome, type Verdict } from './verdict';

const ICON: Record<Verdict, string> = {
  passed: '✅',
  failed: '❌',
  error: '⚠️',
  skipped: '⏭️',
  timeout: '⏱️',
  api_error: '⚠️',
};

const COUNTERS = [
  'total',
  'passed',
  'failed',
  'error',
  'skipped',
  'queued',
  'running',
] as const satisfies ReadonlyArray<keyof ReportCounts>;

/** Step outputs: the verdict, the link, the exit code and every counter (all 0 when nothing ran). */
export function setOutputs(outcome: Outcome): void {
  const report = outcome.kind === 'report' ? outcome.report : null;
  core.setOutput('status', verdictOf(outcome));
  core.setOutput('suite-run-url', report?.suiteRunUrl ?? '');
  core.setOutput('exit-code', exitCodeOf(outcome));
  for (const name of COUNTERS) core.setOutput(name, report?.counts[name] ?? 0);
  core.setOutput('flaky', report ? flakyCount(report.tests) : 0);
}

/** The job summary: the verdict, a link to the detailed view, the counters and the tests that did not pass. */
export async function writeSummary(outcome: Outcome): Promise<void> {
  const verdict = verdictOf(outcome);
  const summary = core.summary.addHeading(`Testrun: ${ICON[verdict]} ${verdict}`, 3);
  if (outcome.kind !== 'report') {
    summary.addRaw(html(messageOf(outcome)), true);
  } else {
    const r = outcome.report;
    const what =
      r.kind === 'suite' ? `${r.project ?? ''}/${r.suite ?? ''}` : r.kind === 'project' ? r.project : r.testId;
    const link = r.suiteRunUrl ? ` · ${anchor('Open the detailed view', r.suiteRunUrl)}` : '';
    summary.addRaw(`<p><strong>${html(what ?? '')}</strong> (${r.kind})${link}</p>`, true);
    const c = r.counts;
    summary.addTable([
      ['Passed', 'Failed', 'Error', 'Skipped', 'Total', 'Flaky'].map((data) => ({ data, header: true })),
      [c.passed, c.failed, c.error, c.skipped, c.total, flakyCount(r.tests)].map(String),
    ]);
    const bad = r.tests.filter((t) => t.status !== 'passed' && t.status !== 'skipped');
    if (bad.length > 0) {
      summary.addTable([
        ['Test', 'Status', 'What happened'].map((data) => ({ data, header: true })),
        ...bad.map((t) => [
          t.viewUrl ? anchor(t.name, t.viewUrl) : html(t.name),
          html(t.status),
          html(
            t.result_summary ??
              (t.status === 'queued' || t.status === 'running' ? 'not finished within the wait budget' : ''),
          ),
        ]),
      ]);
    }
    const flaky = r.tests.filter((t) => t.flaky);
    if (flaky.length > 0) {
      summary.addTable([
        ['Flaky test (passed on a retry)', 'What happened'].map((data) => ({ data, header: true })),
        ...flaky.map((t) => [t.viewUrl ? anchor(t.name, t.viewUrl) : html(t.name), html(t.result_summary ?? '')]),
      ]);
    }
    summary.addRaw(`<p>${html(r.message)}</p>`, true);
  }
  try {
    await summary.write();
  } catch (e) {
    // Outside a runner (no GITHUB_STEP_SUMMARY) the outputs and the log still tell the verdict.
    core.warning(`No job summary written: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Text safe inside the summary's HTML. */
function html(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function anchor(text: string, href: string): string {
  return `<a href="${html(href)}">${html(text)}</a>`;
}
