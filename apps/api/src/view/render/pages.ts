import { formatDuration, type RunStatus } from '@testrun/contracts';
import { filtered, isFlaky, matchesFilter, searchText, showsDetailsInline, type SuiteFilter } from '../filters';
import { filterBar } from './filter-bar';
import { redactCredentials } from './format';
import { historySection } from './history';
import { html, type SafeHtml } from './html';
import { chip, layout, livePath, messagePage, metaList, runPath, suitePath, time, type Paths } from './layout';
import type { ViewRun, ViewSuiteRun } from '../model';
import { attemptText, runAttempts } from './attempts';
import { renderRunDetails, skipNote } from './run-details';
import { deploymentWarnings, previewMark, versionMeta } from './deployment-warnings';
import { queueWaitNote } from './queue-wait';
import { fileGroups, groupsByFile, testLocation } from './suite-files';
import { failedSetupNote, setupTestsSection } from './setup-tests';
import { visualChangesSection } from './visual';
import { visualSummarySection } from './visual-summary';

/** A run that passed only on a retry is marked flaky, in words (never only a colour). */
function flakyMark(run: Pick<ViewRun, 'status' | 'retry'>): SafeHtml | '' {
  return isFlaky(run) ? html` <span class="chip chip-flaky" data-flaky-mark>flaky</span>` : '';
}

export function renderRunPage(p: Paths, run: ViewRun): string {
  const body = html`<header class="page-header">
      <p class="crumbs">Test run <code>${run.id}</code></p>
      <h1>
        ${run.testName} ${chip(run.status, html` data-live-status`)}${flakyMark(run)}${previewMark(run.deployment)}
      </h1>
      <p class="summary" data-run="${run.id}"><span data-run-summary>${redactCredentials(run.resultSummary)}</span></p>
      ${failedSetupNote(p, run)}
      ${metaList([
        ['Status', chip(run.status, html` data-run-status`)],
        ['Duration', html`<span data-run-duration>${formatDuration(run.durationMs)}</span>`],
        ['Target', html`<code>${redactCredentials(run.baseUrl)}</code>`],
        ['Attempt', attemptText(run)],
        ...versionMeta(run.deployment),
        ['Queued', time(run.createdAt)],
        ['Started', time(run.startedAt)],
        ['Finished', time(run.finishedAt)],
      ])}
      ${queueWaitNote(run)}
    </header>
    ${deploymentWarnings(run.deployment)} ${setupTestsSection(p, runPath(p, run), run.setupTests)}
    ${historySection(p, run, 2)} ${visualChangesSection(p, run)} ${runAttempts(p, run)}`;
  return layout({
    title: `${run.status} · ${run.testName}`,
    paths: p,
    live: livePath(runPath(p, run), run.status),
    body,
  });
}

/** The order of a suite page's groups: what needs attention first. */
const GROUPS: ReadonlyArray<readonly [RunStatus, string]> = [
  ['failed', 'Failed'],
  ['error', 'Errors'],
  ['running', 'Running'],
  ['queued', 'Queued'],
  ['skipped', 'Skipped'],
  ['passed', 'Passed'],
];

function testEntry(p: Paths, run: ViewRun, shown: boolean): SafeHtml {
  const inline = showsDetailsInline(run);
  const open = run.status === 'failed' || run.status === 'error';
  const page = runPath(p, run);
  // A folded pass's steps are fetched when it is opened (from its page's `/fragment`); without the
  // script, the link to its page stands for them.
  const folded = run.status === 'skipped' ? skipNote(run) : '';
  return html`<li
    class="test"
    data-run="${run.id}"
    data-status="${run.status}"
    ${isFlaky(run) ? html`data-flaky` : ''}
    ${shown ? '' : html`hidden`}
  >
    <details id="run-${run.id}" ${open ? ' open' : ''}${inline ? '' : html` data-fragment`}>
      <summary>
        <span class="summary-line"
          >${chip(run.status, html` data-run-status`)}${flakyMark(run)} <span class="test-name">${run.testName}</span>
          <span class="dur" data-run-duration>${formatDuration(run.durationMs)}</span>${testLocation(run)}</span
        >
        <span class="test-summary" data-run-summary
          >${redactCredentials(run.resultSummary)}${run.status === 'skipped' && run.skipReason ? html` <code>${run.skipReason}</code>` : ''}</span
        >
      </summary>
      <div class="test-body">
        ${inline ? renderRunDetails(p, run, 3) : html`<div class="lazy">${folded}</div>`} ${historySection(p, run, 3)}
        <p class="run-link"><a href="${page}">Open the page of this run</a></p>
      </div>
    </details>
  </li>`;
}

function counters(suite: ViewSuiteRun): SafeHtml {
  const c = suite.counts;
  const items: Array<[string, number]> = [
    ['passed', c.passed],
    ['failed', c.failed],
    ['error', c.error],
    ['skipped', c.skipped],
    ['running', c.running],
    ['queued', c.queued],
  ];
  let x = 0;
  const segments = items.map(([name, n]) => {
    const w = c.total ? (n / c.total) * 100 : 0;
    const seg = html`<rect
      class="fill fill-${name}"
      data-segment="${name}"
      x="${x.toFixed(2)}"
      y="0"
      width="${w.toFixed(2)}"
      height="10"
    ></rect>`;
    x += w;
    return seg;
  });
  return html`<section class="counts" aria-labelledby="counts-heading">
    <h2 id="counts-heading" class="visually-hidden">Counts</h2>
    <ul class="counters">
      <li class="counter counter-total"><span class="n" data-count="total">${c.total}</span> tests</li>
      ${items.map(([name, n]) => html`<li class="counter counter-${name}${n === 0 ? ' zero' : ''}"><span class="n" data-count="${name}">${n}</span> ${name}</li>`)}
      <li
        class="counter counter-flaky${c.flaky === 0 ? ' zero' : ''}"
        title="Passed on a retry (counted among the passed)"
      >
        <span class="n" data-count="flaky">${c.flaky}</span> flaky
      </li>
    </ul>
    <svg class="progress" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">
      <rect class="track" x="0" y="0" width="100" height="10"></rect>
      ${segments}
    </svg>
  </section>`;
}

function testGroup(
  p: Paths,
  suite: ViewSuiteRun,
  shown: ReadonlySet<string>,
  [status, title]: readonly [RunStatus, string],
): SafeHtml {
  const runs = suite.runs.filter((r) => r.status === status);
  if (runs.length === 0) return html``;
  const list = html`<ol class="tests">
    ${runs.map((r) => testEntry(p, r, shown.has(r.id)))}
  </ol>`;
  // A group the filter empties is hidden whole (the script does the same as the filter changes).
  const hidden = runs.every((r) => !shown.has(r.id)) ? html` hidden` : '';
  const headingText = html`${title} <span class="muted">(${runs.length})</span>`;
  if (status === 'passed' || status === 'skipped') {
    // Long lists of passes stay folded while something needs attention.
    const open = status === 'skipped' ? runs.length <= 20 : suite.counts.failed + suite.counts.error === 0;
    return html`<section class="group group-${status}" aria-labelledby="group-${status}" ${hidden}>
      <details class="group-details" ${open || shown.size < suite.runs.length ? ' open' : ''}>
        <summary><h2 id="group-${status}">${headingText}</h2></summary>
        ${list}
      </details>
    </section>`;
  }
  return html`<section class="group group-${status}" aria-labelledby="group-${status}" ${hidden}>
    <h2 id="group-${status}">${headingText}</h2>
    ${list}
  </section>`;
}

/**
 * The suite page's list: a Playwright suite run's tests by spec file, as Playwright's report lists
 * them; a step-test suite's by status, what needs attention first.
 */
function testGroups(p: Paths, suite: ViewSuiteRun, shown: ReadonlySet<string>): SafeHtml {
  if (groupsByFile(suite)) return fileGroups(suite, shown, (r) => testEntry(p, r, shown.has(r.id)));
  return html`${GROUPS.map((group) => testGroup(p, suite, shown, group))}`;
}

/**
 * The suite page, its list narrowed by `filter`. `texts` holds each run's search text (steps
 * included) when the filter has a search; without one, a run's own text is enough.
 */
export function renderSuitePage(
  p: Paths,
  suite: ViewSuiteRun,
  filter: SuiteFilter = { status: 'all', q: '' },
  texts: ReadonlyMap<string, string> = new Map(),
): string {
  const page = suitePath(p, suite);
  const live = livePath(page, suite.status);
  const shown = new Set(
    suite.runs.filter((r) => matchesFilter(r, texts.get(r.id) ?? searchText(r), filter)).map((r) => r.id),
  );
  const duration = suite.startedAt && suite.finishedAt ? suite.finishedAt.getTime() - suite.startedAt.getTime() : null;
  const body = html`<header class="page-header">
      <p class="crumbs">${suite.projectName} <span aria-hidden="true">›</span> ${suite.suiteName}</p>
      <h1>Suite run ${chip(suite.status, html` data-live-status`)}${previewMark(suite.deployment)}</h1>
      ${metaList([
        ['Suite', html`<code>${suite.projectSlug}/${suite.suiteSlug}</code>`],
        ['Created', time(suite.createdAt)],
        ['Started', time(suite.startedAt)],
        ['Finished', time(suite.finishedAt)],
        ['Duration', formatDuration(duration)],
        ...versionMeta(suite.deployment),
        ['Id', html`<code>${suite.id}</code>`],
      ])}
      ${queueWaitNote(suite)}
      ${live ? html`<p class="live-hint">This suite is still running. The page updates itself.</p>` : ''}
    </header>
    ${deploymentWarnings(suite.deployment)} ${counters(suite)} ${visualSummarySection(p, suite)}
    ${setupTestsSection(p, suitePath(p, suite), suite.setupTests)}
    ${filterBar(suite, filter, shown.size, `${page}/search.json`)}
    <div class="test-groups">${testGroups(p, suite, shown)}</div>
    <p class="no-match" ${shown.size === 0 && filtered(filter) ? '' : html`hidden`}>
      No test matches this filter. <a href="?" data-filter="all">Show all tests</a>
    </p>`;
  return layout({ title: `${suite.status} · ${suite.projectName} › ${suite.suiteName}`, paths: p, live, body });
}

export function renderNotFound(p: Paths): string {
  return messagePage(
    p,
    'Not found',
    'There is nothing at this address. The link may be incomplete: copy the whole link again.',
  );
}

/** The page of an artifact that retention deleted (answered 410 Gone). */
export function renderArtifactExpired(p: Paths): string {
  return messagePage(
    p,
    'Artifact expired',
    "This screenshot, trace or video was deleted after the deployment's retention period. The run's page still shows its steps and outcome.",
  );
}

/** The page of a request that failed: `unavailable` for an outage (retry soon), else an internal fault. */
export function renderFailure(p: Paths, kind: 'unavailable' | 'internal'): string {
  return kind === 'unavailable'
    ? messagePage(p, 'Temporarily unavailable', 'The page cannot be shown right now. Try again in a few seconds.')
    : messagePage(p, 'Something went wrong', 'The page could not be shown because of a fault on our side.');
}
