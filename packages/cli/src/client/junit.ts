import type { ReportSetupTest, ReportTest, RunReport, TestLocation } from '@testrun/contracts';
import { junitVerdict } from './junit-classify';
import { flakyCount, fullError, passedOnRetry } from './report';
import { changedScreenshots } from './visual-notes';

/**
 * JUnit XML for a report, in the dialect that Jenkins, GitLab, GitHub test-report actions and
 * most viewers read. Step tests are one `<testsuite>` (the suite, the project or the single test)
 * with one `<testcase>` each. Playwright tests are written as Playwright's own junit reporter
 * writes them: one `<testsuite>` per spec file (and Playwright project, named in `hostname`), each
 * test's `name` its title path joined by ' › ', its `classname` the spec file's path as Playwright
 * names it (from the config's rootDir, its testDir) and `file` its path in the bundle; a failure's
 * body starts with the test's `file:line:column › title`, and the run's view
 * (trace, screenshots, video) is a `[[ATTACHMENT|link]]` line of its `<system-out>`.
 *
 * `failed` → `<failure>`, `error` → `<error>`, `skipped` → `<skipped>`, except that a Playwright
 * test's own failure or error is a `<failure type="expect.matcher">` or `<error type="Name">` with
 * its error's first line as the message, as Playwright's reporter classifies it (junit-classify.ts);
 * a test still unfinished when the wait budget ran out is an `<error type="timeout">`. Messages
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
  const c = report.counts;
  // Setup tests are test cases as Playwright's junit reporter writes them, in the totals too.
  const setups = (report.setupTests ?? []).map(setupAsTest);
  const s = countAttributes(setups);
  const moved = reclassified(report.tests);
  const attrs = {
    tests: c.total + s.tests,
    // A Playwright test's failure or error is the one Playwright's reporter would write (junit-classify.ts).
    failures: c.failed + s.failures + moved.toFailure - moved.toError,
    errors: c.error + c.queued + c.running + s.errors - moved.toFailure + moved.toError,
    skipped: c.skipped + s.skipped,
    time: seconds(report.durationMs),
  };
  const timestamp = generatedAt.toISOString().replace(/\.\d+Z$/, '');
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  lines.push(`<testsuites name="testrun"${attributes(attrs)}>`);
  const all = groups([...setups, ...report.tests], suiteName, report.kind === 'test' ? 'testrun' : suiteName);
  for (const group of all) {
    // One suite of step tests only is the whole report; a Playwright file's suite counts its own.
    const own =
      all.length === 1 && !group.location ? attrs : { ...countAttributes(group.tests), time: sumSeconds(group.tests) };
    const host = group.location?.project ? ` hostname="${esc(group.location.project)}"` : '';
    lines.push(`  <testsuite name="${esc(group.name)}"${attributes(own)} timestamp="${timestamp}"${host}>`);
    const props: [string, string][] = [['status', report.status]];
    if (report.suiteRunId) props.push(['suiteRunId', report.suiteRunId]);
    if (report.suiteRunUrl) props.push(['suiteRunUrl', report.suiteRunUrl]);
    const flaky = flakyCount(group.tests);
    if (flaky > 0) props.push(['flaky', String(flaky)]);
    lines.push('    <properties>');
    for (const [name, value] of props) lines.push(`      <property name="${esc(name)}" value="${esc(value)}"/>`);
    lines.push('    </properties>');
    for (const t of group.tests) lines.push(...testcase(t, group.classname, report.suiteRunUrl));
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

/**
 * A setup test as a test case (its `testsuite` is its spec file's, of its setup project, written
 * before the tests that depended on it, as Playwright's junit reporter orders them).
 */
function setupAsTest(t: ReportSetupTest): ReportTest {
  return {
    runId: t.id,
    name: t.name,
    status: t.status,
    result_summary: t.result_summary,
    error: t.error,
    skip_reason: null,
    flaky: false,
    attempts: 1,
    previous_attempts: [],
    viewUrl: t.viewUrl,
    durationMs: t.duration_ms,
    location: t.location,
    ...(t.failure ? { failure: t.failure } : {}),
  };
}

/** How many tests that ended `error` are written as a `<failure>`, and `failed` as an `<error>`. */
function reclassified(tests: readonly ReportTest[]): { toFailure: number; toError: number } {
  const count = (status: string, element: string) =>
    tests.filter((t) => t.status === status && junitVerdict(t).element === element).length;
  return { toFailure: count('error', 'failure'), toError: count('failed', 'error') };
}

/** `Run: run_…`, or `Setup test: setup_…` for a setup test's entry. */
function idLine(t: ReportTest): string {
  return t.runId.startsWith('setup_') ? `Setup test: ${t.runId}` : `Run: ${t.runId}`;
}

type Group = { name: string; classname: string; location: TestLocation | null; tests: ReportTest[] };

/**
 * The `<testsuite>`s: step tests together (first, under the report's name), then the Playwright
 * tests by spec file and Playwright project, in the order they first appear (as Playwright's junit
 * reporter writes one per file of each project). A report without tests still has its one suite.
 */
function groups(tests: readonly ReportTest[], suiteName: string, classname: string): Group[] {
  const steps: Group = { name: suiteName, classname, location: null, tests: [] };
  const byFile = new Map<string, Group>();
  for (const t of tests) {
    const location = t.location ?? null;
    if (location === null) {
      steps.tests.push(t);
      continue;
    }
    const key = `${location.project}\0${location.file}`;
    let group = byFile.get(key);
    if (!group) {
      const file = reportedFile(location);
      group = { name: file, classname: file, location, tests: [] };
      byFile.set(key, group);
    }
    group.tests.push(t);
  }
  return steps.tests.length > 0 || byFile.size === 0 ? [steps, ...byFile.values()] : [...byFile.values()];
}

/** A spec file as Playwright's reporters name it: from the config's rootDir when the location gives one. */
function reportedFile(location: TestLocation): string {
  const root = location.rootDir?.replace(/\/+$/, '');
  return root && location.file.startsWith(`${root}/`) ? location.file.slice(root.length + 1) : location.file;
}

/** A suite's `tests`, `failures`, `errors` (a test unfinished when the wait ran out is one) and `skipped`. */
function countAttributes(tests: readonly ReportTest[]) {
  const count = (...statuses: string[]) => tests.filter((t) => statuses.includes(t.status)).length;
  const ended = (element: 'failure' | 'error') =>
    tests.filter((t) => (t.status === 'failed' || t.status === 'error') && junitVerdict(t).element === element).length;
  return {
    tests: tests.length,
    failures: ended('failure'),
    errors: ended('error') + count('queued', 'running'),
    skipped: count('skipped'),
  };
}

function sumSeconds(tests: readonly ReportTest[]): string {
  return seconds(tests.reduce((sum, t) => sum + (t.durationMs ?? 0), 0));
}

/** A test's name in a report: a Playwright test's title path as Playwright's reporters join it, else its name. */
function testTitle(t: Pick<ReportTest, 'name' | 'location'>): string {
  return t.location ? t.location.titlePath.join(' › ') : t.name;
}

function testcase(t: ReportTest, classname: string, suiteRunUrl: string | null): string[] {
  const time = t.durationMs === null ? '' : ` time="${seconds(t.durationMs)}"`;
  const where = t.location ? ` file="${esc(t.location.file)}"` : '';
  const open = `    <testcase name="${esc(testTitle(t))}" classname="${esc(classname)}"${where}${time}`;
  const link = t.viewUrl ?? suiteRunUrl;
  const screenshots = changedScreenshots(t);
  const body = [
    t.location ? `${reportedFile(t.location)}:${t.location.line}:${t.location.column} › ${testTitle(t)}` : '',
    t.result_summary ?? '',
    fullError(t),
    screenshots ? `${screenshots.note}. ${screenshots.hint}` : '',
    // A Playwright test's failing step is in its summary and code frame, as Playwright's reporter has it.
    t.error?.step && !t.location ? `Step: ${t.error.step}` : '',
    idLine(t),
    link ? `View: ${link}` : '',
  ]
    .filter(Boolean)
    .join('\n');
  const out = systemOut(t, link);
  switch (t.status) {
    case 'passed': {
      const flaky = earlierAttempts(t, 'flaky');
      if (out.length === 0 && flaky.length === 0) return [`${open}/>`];
      return [`${open}>`, ...flaky, ...out, '    </testcase>'];
    }
    case 'failed':
    case 'error': {
      const { element, type, message } = junitVerdict(t);
      const final = `      <${element} message="${esc(message)}" type="${esc(type)}">${esc(body)}</${element}>`;
      const earlier = earlierAttempts(t, 'rerun');
      if (element === 'failure') return [`${open}>`, final, ...earlier, ...out, '    </testcase>'];
      // Surefire's schema orders a test case's children failure, rerunFailure, …, error, rerunError.
      return [
        `${open}>`,
        ...earlier.filter((line) => line.includes('<rerunFailure')),
        final,
        ...earlier.filter((line) => line.includes('<rerunError')),
        ...out,
        '    </testcase>',
      ];
    }
    case 'skipped':
      return [
        `${open}>`,
        `      <skipped message="${esc(t.skip_reason ?? t.result_summary ?? 'skipped')}"/>`,
        '    </testcase>',
      ];
    default: {
      const text = `Still ${t.status} when the wait budget ran out.\n${idLine(t)}${link ? `\nView: ${link}` : ''}`;
      return [
        `${open}>`,
        `      <error message="${esc(`still ${t.status} when the wait budget ran out`)}" type="timeout">${esc(text)}</error>`,
        '    </testcase>',
      ];
    }
  }
}

/** The view's link of one of a run's artifacts: under its run's view link. */
function artifactLink(viewUrl: string, artifactId: string): string {
  const url = new URL(viewUrl);
  url.pathname = `${url.pathname.replace(/\/$/, '')}/artifacts/${encodeURIComponent(artifactId)}`;
  return url.toString();
}

/**
 * A test's `<system-out>`: a flaky pass in words, then its view link: a passed step test's as
 * `View: …`, a Playwright test's (its trace, screenshots and video) as the `[[ATTACHMENT|…]]` line
 * of Playwright's junit reporter, which Jenkins and GitLab turn into a link, followed by one such
 * line for each file the test attached that the run kept (when the CLI read the run: every test
 * that did not pass cleanly or attached files); none when empty.
 */
function systemOut(t: ReportTest, link: string | null): string[] {
  const lines = [t.status === 'passed' && t.flaky ? flakyText(t) : ''];
  if (t.location && t.viewUrl) {
    lines.push(`[[ATTACHMENT|${t.viewUrl}]]`);
    for (const a of t.attachments ?? []) lines.push(`[[ATTACHMENT|${artifactLink(t.viewUrl, a.id)}]]`);
  } else if (!t.location && t.status === 'passed' && link) lines.push(`View: ${link}`);
  const text = lines.filter(Boolean).join('\n');
  return text ? [`      <system-out>${esc(text)}</system-out>`] : [];
}

/**
 * Surefire's elements for a test's earlier attempts: `flakyFailure`/`flakyError` on a test that
 * passed, `rerunFailure`/`rerunError` on one that did not; each with the attempt's summary (which
 * names the attempt), the failures before the errors as Surefire's schema orders them.
 */
function earlierAttempts(t: ReportTest, kind: 'flaky' | 'rerun'): string[] {
  const failuresFirst = [...t.previous_attempts].sort(
    (a, b) => Number(a.status !== 'failed') - Number(b.status !== 'failed'),
  );
  return failuresFirst.map((a) => {
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
