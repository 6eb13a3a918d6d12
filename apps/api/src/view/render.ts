import type { RunStatus } from '@testrun/contracts';
import { ASSETS } from './assets';
import { describeCode, formatBytes, formatDuration, formatInstant } from './format';
import { html, type SafeHtml } from './html';
import type { ViewArtifact, ViewRun, ViewStep, ViewSuiteRun } from './model';
import { showsDetailsInline } from './queries';

/** Where the router is mounted (`req.baseUrl`, normally `/view`); every link is built from it. */
export type Paths = { base: string };

export function runPath(p: Paths, run: Pick<ViewRun, 'id' | 'token'>): string {
  return `${p.base}/runs/${encodeURIComponent(run.id)}/${run.token}`;
}

export function suitePath(p: Paths, suite: Pick<ViewSuiteRun, 'id' | 'token'>): string {
  return `${p.base}/suite-runs/${encodeURIComponent(suite.id)}/${suite.token}`;
}

function artifactPath(p: Paths, run: ViewRun, artifactId: string): string {
  return `${runPath(p, run)}/artifacts/${encodeURIComponent(artifactId)}`;
}

function traceViewerPath(p: Paths, traceUrl: string): string {
  return `${p.base}/trace-viewer/index.html?trace=${encodeURIComponent(traceUrl)}`;
}

/** Credentials in a URL's userinfo (`https://user:pass@host`) are secrets: never shown. */
export function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi, '$1***@');
}

const TERMINAL: readonly RunStatus[] = ['passed', 'failed', 'error', 'skipped'];

function chip(status: RunStatus, attrs: SafeHtml | '' = ''): SafeHtml {
  return html`<span class="chip chip-${status}" ${attrs}>${status}</span>`;
}

function time(date: Date | null): SafeHtml {
  if (!date) return html`<span class="muted">–</span>`;
  return html`<time datetime="${date.toISOString()}">${formatInstant(date)}</time>`;
}

type Heading = 2 | 3;
function heading(level: Heading, text: string | SafeHtml, id?: string): SafeHtml {
  return level === 2
    ? html`<h2${id ? html` id="${id}"` : ''}>${text}</h2>`
    : html`<h3${id ? html` id="${id}"` : ''}>${text}</h3>`;
}

function layout(opts: { title: string; paths: Paths; live: string | null; body: SafeHtml }): string {
  const { base } = opts.paths;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <meta name="referrer" content="no-referrer" />
        <title>${opts.title}</title>
        <link rel="stylesheet" href="${base}/assets/${ASSETS.css.name}" />
        <script src="${base}/assets/${ASSETS.js.name}" defer></script>
      </head>
      <body>
        <a class="skip-link" href="#main">Skip to content</a>
        <main id="main" ${opts.live ? html` data-live="${opts.live}"` : ''}>${opts.body}</main>
        <p class="live-note" role="status" aria-live="polite" id="live-note"></p>
        <footer class="page-footer">
          Testrun · this page's address is a capability link: anyone who has it can see this page.
        </footer>
      </body>
    </html>`.value;
}

function stepScreenshot(run: ViewRun, step: ViewStep): ViewArtifact | undefined {
  const artifacts = run.artifacts ?? [];
  if (step.screenshotId) return artifacts.find((a) => a.id === step.screenshotId);
  return artifacts.find((a) => a.kind === 'screenshot' && a.stepIndex === step.index);
}

/** The screenshot of the moment a run went wrong: its failing step's, else the last one taken. */
function failureScreenshot(run: ViewRun): ViewArtifact | undefined {
  const steps = run.steps ?? [];
  const failing =
    steps.find((s) => s.index === run.outcomeStep) ??
    steps.find((s) => s.outcome !== 'passed' && s.outcome !== 'skipped');
  const shot = failing ? stepScreenshot(run, failing) : undefined;
  if (shot) return shot;
  const screenshots = (run.artifacts ?? []).filter((a) => a.kind === 'screenshot');
  return screenshots[screenshots.length - 1];
}

function thumbnail(p: Paths, run: ViewRun, a: ViewArtifact, alt: string, size: 'thumb' | 'large'): SafeHtml {
  const href = artifactPath(p, run, a.id);
  return html`<a class="shot shot-${size}" href="${href}" target="_blank" rel="noopener noreferrer"
    ><img src="${href}" alt="${alt}" loading="lazy" decoding="async"
  /></a>`;
}

function failureCallout(p: Paths, run: ViewRun, level: Heading): SafeHtml {
  const steps = run.steps ?? [];
  const step = steps.find((s) => s.index === run.outcomeStep);
  const where = run.outcomeStep
    ? `${run.status === 'failed' ? 'Failed' : 'Error'} at step ${run.outcomeStep}${run.plannedSteps ? ` of ${run.plannedSteps}` : ''}${step ? `: ${step.label}` : ''}`
    : run.status === 'failed'
      ? 'Failed'
      : 'The run could not complete';
  const shot = failureScreenshot(run);
  const why = run.outcomeMessage ?? step?.error ?? run.resultSummary;
  return html`<section
    class="callout callout-${run.status}"
    aria-label="${run.status === 'failed' ? 'Failure' : 'Error'} of ${run.testName}"
  >
    <div class="callout-text">
      ${heading(level, where)}
      <p class="why">${redactCredentials(why)}</p>
      ${run.outcomeCode ? html`<p class="code">${describeCode(run.outcomeCode)} <code>${run.outcomeCode}</code></p>` : ''}
    </div>
    ${
      shot
        ? html`<figure class="callout-shot">
            ${thumbnail(p, run, shot, `Screenshot at ${step ? `step ${step.index}` : 'the end of the run'} of ${run.testName}`, 'large')}
            <figcaption>
              The page when it went wrong${shot.stepIndex ? ` (step ${shot.stepIndex})` : ''}. Select to open full size.
            </figcaption>
          </figure>`
        : ''
    }
  </section>`;
}

/** The steps as a table with a bar per step, placed and sized to scale on the run's own clock. */
function stepTimeline(p: Paths, run: ViewRun, level: Heading): SafeHtml {
  const steps = run.steps ?? [];
  if (steps.length === 0) {
    const why =
      run.status === 'queued'
        ? 'Not started yet.'
        : run.status === 'skipped'
          ? 'Not executed.'
          : 'No steps were recorded.';
    return html`<section class="timeline">
      ${heading(level, 'Steps')}
      <p class="muted">${why}</p>
    </section>`;
  }
  const t0 = Math.min(...steps.map((s) => s.startedAt.getTime()));
  const t1 = Math.max(...steps.map((s) => s.startedAt.getTime() + s.durationMs));
  const span = Math.max(t1 - t0, 1);
  const rows = steps.map((s) => {
    const x = ((s.startedAt.getTime() - t0) / span) * 100;
    const w = Math.max((s.durationMs / span) * 100, 0.4);
    const shot = stepScreenshot(run, s);
    return html`<tr class="step step-${s.outcome}">
        <td class="num">${s.index}</td>
        <th scope="row" class="label">${stepLabel(s.action, redactCredentials(s.label))}</th>
        <td class="target">${s.target ? html`<code>${redactCredentials(s.target)}</code>` : ''}</td>
        <td>${chip(s.outcome as RunStatus)}</td>
        <td class="num">${formatDuration(s.durationMs)}</td>
        <td class="bar-cell">
          <svg class="bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">
            <rect class="track" x="0" y="0" width="100" height="10"></rect>
            <rect
              class="fill fill-${s.outcome}"
              x="${x.toFixed(2)}"
              y="0"
              width="${Math.min(w, 100 - x).toFixed(2)}"
              height="10"
            ></rect>
          </svg>
        </td>
        <td class="shot-cell">
          ${shot ? thumbnail(p, run, shot, `Screenshot after step ${s.index}: ${s.label}`, 'thumb') : ''}
        </td>
      </tr>
      ${
        s.error
          ? html`<tr class="step-error-row">
              <td></td>
              <td colspan="6"><p class="step-message">${redactCredentials(s.error)}</p></td>
            </tr>`
          : ''
      }`;
  });
  const notRun = run.plannedSteps - steps.length;
  return html`<section class="timeline">
    ${heading(level, html`Steps <span class="muted">(${steps.length}${run.plannedSteps ? ` of ${run.plannedSteps}` : ''}, ${formatDuration(span)} on the timeline)</span>`)}
    <div class="table-wrap">
      <table class="steps">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Step</th>
            <th scope="col">Target</th>
            <th scope="col">Outcome</th>
            <th scope="col">Duration</th>
            <th scope="col" class="bar-cell">Timeline</th>
            <th scope="col">Screenshot</th>
          </tr>
        </thead>
        <tbody>
          ${rows}
        </tbody>
      </table>
    </div>
    ${notRun > 0 && TERMINAL.includes(run.status) ? html`<p class="muted">${notRun} later step${notRun === 1 ? '' : 's'} not run.</p>` : ''}
  </section>`;
}

function recording(p: Paths, run: ViewRun, level: Heading): SafeHtml {
  const artifacts = run.artifacts ?? [];
  const videos = artifacts.filter((a) => a.kind === 'video');
  const traces = artifacts.filter((a) => a.kind === 'trace');
  if (videos.length === 0 && traces.length === 0) {
    if (!TERMINAL.includes(run.status) || run.status === 'skipped') return html``;
    return html`<section class="recording">
      ${heading(level, 'Recording')}
      <p class="muted">No recording was kept for this run.</p>
    </section>`;
  }
  return html`<section class="recording">
    ${heading(level, 'Recording')}
    ${videos.map((v) => html`<video class="video" controls preload="metadata" src="${artifactPath(p, run, v.id)}" aria-label="Video of ${run.testName}"><a href="${artifactPath(p, run, v.id)}">Download the video</a></video>`)}
    ${
      traces.length
        ? html`<ul class="trace-links">
            ${traces.map((t) => {
              const href = artifactPath(p, run, t.id);
              return html`<li>
                <a class="button" href="${traceViewerPath(p, href)}" target="_blank" rel="noopener noreferrer"
                  >Open the Playwright trace</a
                >
                <a href="${href}" download="${t.name}">Download ${t.name} (${formatBytes(t.sizeBytes)})</a>
              </li>`;
            })}
          </ul>`
        : ''
    }
  </section>`;
}

function screenshotGallery(p: Paths, run: ViewRun): SafeHtml {
  const shots = (run.artifacts ?? []).filter((a) => a.kind === 'screenshot');
  if (shots.length === 0) return html``;
  return html`<section class="gallery">
    ${heading(2, 'Screenshots')}
    <ul class="shots">
      ${shots.map(
        (a) =>
          html`<li>
            <figure>
              ${thumbnail(p, run, a, `Screenshot ${a.stepIndex ? `after step ${a.stepIndex}` : a.name} of ${run.testName}`, 'thumb')}
              <figcaption>${a.stepIndex ? `Step ${a.stepIndex}` : a.name}</figcaption>
            </figure>
          </li>`,
      )}
    </ul>
  </section>`;
}

/** The body of one run: why it went wrong, its step timeline and its recording. Also served alone as a fragment. */
export function renderRunDetails(p: Paths, run: ViewRun, level: Heading): SafeHtml {
  return html`<div class="run-details">
    ${run.status === 'failed' || run.status === 'error' ? failureCallout(p, run, level) : ''}
    ${run.status === 'skipped' ? html`<p class="skip">Skipped${run.skipReason ? html`: ${describeCode(run.skipReason)} <code>${run.skipReason}</code>` : ''}.</p>` : ''}
    ${run.status !== 'skipped' ? stepTimeline(p, run, level) : ''} ${recording(p, run, level)}
  </div>`;
}

function runMeta(run: ViewRun): SafeHtml {
  return html`<dl class="meta">
    <div>
      <dt>Status</dt>
      <dd>${chip(run.status, html` data-run-status`)}</dd>
    </div>
    <div>
      <dt>Duration</dt>
      <dd data-run-duration>${formatDuration(run.durationMs)}</dd>
    </div>
    <div>
      <dt>Target</dt>
      <dd><code>${redactCredentials(run.baseUrl)}</code></dd>
    </div>
    <div>
      <dt>Attempt</dt>
      <dd>${run.attempt || '–'}</dd>
    </div>
    <div>
      <dt>Queued</dt>
      <dd>${time(run.createdAt)}</dd>
    </div>
    <div>
      <dt>Started</dt>
      <dd>${time(run.startedAt)}</dd>
    </div>
    <div>
      <dt>Finished</dt>
      <dd>${time(run.finishedAt)}</dd>
    </div>
  </dl>`;
}

export function renderRunPage(p: Paths, run: ViewRun): string {
  const terminal = TERMINAL.includes(run.status);
  const body = html`<header class="page-header">
      <p class="crumbs">Test run <code>${run.id}</code></p>
      <h1>${run.testName} ${chip(run.status, html` data-live-status`)}</h1>
      <p class="summary" data-run="${run.id}"><span data-run-summary>${redactCredentials(run.resultSummary)}</span></p>
      ${runMeta(run)}
    </header>
    ${renderRunDetails(p, run, 2)} ${screenshotGallery(p, run)}`;
  return layout({
    title: `${run.status} · ${run.testName}`,
    paths: p,
    live: terminal ? null : `${runPath(p, run)}/status.json`,
    body,
  });
}

const GROUPS: ReadonlyArray<{ status: RunStatus; title: string }> = [
  { status: 'failed', title: 'Failed' },
  { status: 'error', title: 'Errors' },
  { status: 'running', title: 'Running' },
  { status: 'queued', title: 'Queued' },
  { status: 'skipped', title: 'Skipped' },
  { status: 'passed', title: 'Passed' },
];

function testEntry(p: Paths, run: ViewRun): SafeHtml {
  const inline = showsDetailsInline(run);
  const open = run.status === 'failed' || run.status === 'error';
  const page = runPath(p, run);
  return html`<li class="test" data-run="${run.id}">
    <details id="run-${run.id}" ${open ? ' open' : ''}${inline ? '' : html` data-fragment="${page}/fragment"`}>
      <summary>
        <span class="summary-line"
          >${chip(run.status, html` data-run-status`)} <span class="test-name">${run.testName}</span>
          <span class="dur" data-run-duration>${formatDuration(run.durationMs)}</span></span
        >
        <span class="test-summary" data-run-summary
          >${redactCredentials(run.resultSummary)}${run.status === 'skipped' && run.skipReason ? html` <code>${run.skipReason}</code>` : ''}</span
        >
      </summary>
      <div class="test-body">
        ${inline ? renderRunDetails(p, run, 3) : html`<div class="lazy">${run.status === 'skipped' ? html`<p class="skip">Skipped${run.skipReason ? `: ${describeCode(run.skipReason)}` : ''}.</p>` : html`<p class="muted">Steps, screenshots and recording are on the run's page.</p>`}</div>`}
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
    </ul>
    <svg class="progress" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">
      <rect class="track" x="0" y="0" width="100" height="10"></rect>
      ${segments}
    </svg>
  </section>`;
}

export function renderSuitePage(p: Paths, suite: ViewSuiteRun): string {
  const terminal = TERMINAL.includes(suite.status);
  const problems = suite.counts.failed + suite.counts.error;
  const groups = GROUPS.map(({ status, title }) => {
    const runs = suite.runs.filter((r) => r.status === status);
    if (runs.length === 0) return html``;
    const list = html`<ol class="tests">
      ${runs.map((r) => testEntry(p, r))}
    </ol>`;
    const headingText = html`${title} <span class="muted">(${runs.length})</span>`;
    if (status === 'passed' || status === 'skipped') {
      // Long lists of passes stay folded while something needs attention.
      const open = status === 'skipped' ? runs.length <= 20 : problems === 0;
      return html`<section class="group group-${status}" aria-labelledby="group-${status}">
        <details class="group-details" ${open ? ' open' : ''}>
          <summary><h2 id="group-${status}">${headingText}</h2></summary>
          ${list}
        </details>
      </section>`;
    }
    return html`<section class="group group-${status}" aria-labelledby="group-${status}">
      <h2 id="group-${status}">${headingText}</h2>
      ${list}
    </section>`;
  });
  const duration = suite.startedAt && suite.finishedAt ? suite.finishedAt.getTime() - suite.startedAt.getTime() : null;
  const body = html`<header class="page-header">
      <p class="crumbs">${suite.projectName} <span aria-hidden="true">›</span> ${suite.suiteName}</p>
      <h1>Suite run ${chip(suite.status, html` data-live-status`)}</h1>
      <dl class="meta">
        <div>
          <dt>Suite</dt>
          <dd><code>${suite.projectSlug}/${suite.suiteSlug}</code></dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>${time(suite.createdAt)}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>${time(suite.startedAt)}</dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>${time(suite.finishedAt)}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>${formatDuration(duration)}</dd>
        </div>
        <div>
          <dt>Id</dt>
          <dd><code>${suite.id}</code></dd>
        </div>
      </dl>
      ${terminal ? '' : html`<p class="live-hint">This suite is still running. The page updates itself.</p>`}
    </header>
    ${counters(suite)} ${groups}`;
  return layout({
    title: `${suite.status} · ${suite.projectName} › ${suite.suiteName}`,
    paths: p,
    live: terminal ? null : `${suitePath(p, suite)}/status.json`,
    body,
  });
}

export function renderNotFound(p: Paths): string {
  return layout({
    title: 'Not found',
    paths: p,
    live: null,
    body: html`<header class="page-header">
      <h1>Not found</h1>
      <p>There is nothing at this address. The link may be incomplete: copy the whole link again.</p>
    </header>`,
  });
}

/** A step's label with its action set apart: `goto "/"` reads as <code>goto</code> "/". */
function stepLabel(action: string, label: string) {
  const rest = label.startsWith(action) ? label.slice(action.length).trimStart() : label;
  return html`<code class="action">${action}</code> ${rest}`;
}
