import type { ReportTest, RunReport } from '@testrun/contracts';
import { flakyCount, passedOnRetry } from './report';

/**
 * JUnit XML for a report, in the dialect that Jenkins, GitLab, GitHub test-report actions and
 * most viewers read: one `<testsuite>` (the suite, the project or the single test) with one
 * `<testcase>` per test. `failed` → `<failure>`, `error` → `<error>`, `skipped` → `<skipped>`; a
 * test still unfinished when the wait budget ran out is an `<error type="timeout">`. Messages
 * carry the run's result summary and a link to its view.
 *
 * Retried tests are written as Maven Surefire writes reruns, which Jenkins, GitLab and most
 * viewers read: a test that passed on a retry has one `<flakyFailure>` (or `<flakyError>`) per
 * earlier attempt and counts as passed; a test that did not pass has its final outcome as
 * `<failure>`/`<error>` and one `<rerunFailure>` (or `<rerunError>`) per earlier attempt.
 * JUnit has no flaky outcome, and viewers that ignore Surefire's elements would show a flaky test
 * as a plain pass: its `<system-out>` says so in words ("Flaky: passed on retry 1 …"), and the
 * suite's `flaky` property counts them.
 */
export function buildJunitXml(report: RunReport, generatedAt: Date = new Date()): string {
  const suiteName = [report.project, report.suite].filter((part) => part !== null).join('/') || (report.testId ?? '');
  const classname = report.kind === 'test' ? 'testrun' : suiteName;
  const c = report.counts;
  const unfinished = c.queued + c.running;
  const attrs = {
    tests: c.total,
    failures: c.failed,
    errors: c.error + unfinished,
    skipped: c.skipped,
    time: seconds(report.durationMs),
  };
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  lines.push(`<testsuites name="testrun"${attributes(attrs)}>`);
  lines.push(
    `  <testsuite name="${esc(suiteName)}"${attributes(attrs)} timestamp="${generatedAt.toISOString().replace(/\.\d+Z$/, '')}">`,
  );
  const props: [string, string][] = [['status', report.status]];
  if (report.suiteRunId) props.push(['suiteRunId', report.suiteRunId]);
  if (report.suiteRunUrl) props.push(['suiteRunUrl', report.suiteRunUrl]);
  const flaky = flakyCount(report.tests);
  if (flaky > 0) props.push(['flaky', String(flaky)]);
  lines.push('    <properties>');
  for (const [name, value] of props) lines.push(`      <property name="${esc(name)}" value="${esc(value)}"/>`);
  lines.push('    </properties>');
  for (const t of report.tests) lines.push(...testcase(t, classname, report.suiteRunUrl));
  lines.push('  </testsuite>');
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

function testcase(t: ReportTest, classname: string, suiteRunUrl: string | null): string[] {
  const time = t.durationMs === null ? '' : ` time="${seconds(t.durationMs)}"`;
  const open = `    <testcase name="${esc(t.name)}" classname="${esc(classname)}"${time}`;
  const link = t.viewUrl ?? suiteRunUrl;
  const body = [
    t.result_summary ?? '',
    t.error?.step ? `Step: ${t.error.step}` : '',
    `Run: ${t.runId}`,
    link ? `View: ${link}` : '',
  ]
    .filter(Boolean)
    .join('\n');
  const message = t.result_summary ?? t.status;
  switch (t.status) {
    case 'passed': {
      const flaky = earlierAttempts(t, 'flaky');
      const text = [t.flaky ? flakyText(t) : '', link ? `View: ${link}` : ''].filter(Boolean).join('\n');
      if (!text && flaky.length === 0) return [`${open}/>`];
      const out = text ? [`      <system-out>${esc(text)}</system-out>`] : [];
      return [`${open}>`, ...flaky, ...out, '    </testcase>'];
    }
    case 'failed':
      return [
        `${open}>`,
        `      <failure message="${esc(message)}" type="failed">${esc(body)}</failure>`,
        ...earlierAttempts(t, 'rerun'),
        '    </testcase>',
      ];
    case 'error':
      return [
        `${open}>`,
        `      <error message="${esc(message)}" type="${esc(t.error?.code ?? 'error')}">${esc(body)}</error>`,
        ...earlierAttempts(t, 'rerun'),
        '    </testcase>',
      ];
    case 'skipped':
      return [
        `${open}>`,
        `      <skipped message="${esc(t.skip_reason ?? t.result_summary ?? 'skipped')}"/>`,
        '    </testcase>',
      ];
    default: {
      const text = `Still ${t.status} when the wait budget ran out.\nRun: ${t.runId}${link ? `\nView: ${link}` : ''}`;
      return [
        `${open}>`,
        `      <error message="${esc(`still ${t.status} when the wait budget ran out`)}" type="timeout">${esc(text)}</error>`,
        '    </testcase>',
      ];
    }
  }
}

/**
 * Surefire's elements for a test's earlier attempts: `flakyFailure`/`flakyError` on a test that
 * passed, `rerunFailure`/`rerunError` on one that did not; each with the attempt's summary.
 */
function earlierAttempts(t: ReportTest, kind: 'flaky' | 'rerun'): string[] {
  return t.previous_attempts.map((a) => {
    const element = `${kind}${a.status === 'failed' ? 'Failure' : 'Error'}`;
    const type = a.error?.code ?? a.status;
    const text = [`Attempt ${a.attempt}: ${a.result_summary}`, a.error?.step ? `Step: ${a.error.step}` : '']
      .filter(Boolean)
      .join('\n');
    return `      <${element} message="${esc(a.result_summary)}" type="${esc(type)}"><stackTrace>${esc(text)}</stackTrace></${element}>`;
  });
}

/** "Flaky: passed on retry 1 (attempt 1 failed: …)": the note of a test that passed only on a retry. */
function flakyText(t: ReportTest): string {
  const earlier = t.previous_attempts.map((a) => `attempt ${a.attempt} ${a.status}: ${a.result_summary}`);
  return `Flaky: ${passedOnRetry(t)}${earlier.length > 0 ? ` (${earlier.join('; ')})` : ''}`;
}

function attributes(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([k, v]) => ` ${k}="${esc(String(v))}"`)
    .join('');
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/** Escapes text for an XML attribute or element, dropping characters XML 1.0 cannot carry at all. */
export function esc(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\r/g, '&#13;');
}
