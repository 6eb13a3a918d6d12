// Over 300 lines: the templates of one run's detail (callout, steps, events, evidence), which share
// their paths and formatting helpers; split by section when it next grows.
import { formatDuration, isTerminalRunStatus } from '@testrun/contracts';
import { comparisonBlock } from './compare';
import { describeCode, formatBytes, formatInstant, redactCredentials } from './format';
import { html, type SafeHtml } from './html';
import { chip, heading, runPath, type Heading, type Paths } from './layout';
import type { ViewArtifact, ViewPageEvent, ViewRun, ViewStep } from './model';

function artifactPath(p: Paths, run: ViewRun, artifactId: string): string {
  return `${runPath(p, run)}/artifacts/${encodeURIComponent(artifactId)}`;
}

function traceViewerPath(p: Paths, traceUrl: string): string {
  return `${p.base}/trace-viewer/index.html?trace=${encodeURIComponent(traceUrl)}`;
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
  return (run.artifacts ?? []).filter((a) => a.kind === 'screenshot').at(-1);
}

/**
 * The order the full-size viewer (view.js) steps through a run's screenshots: when the run failed
 * or errored, the screenshot of the moment it went wrong first, then the others in step order.
 */
function viewerSequence(run: ViewRun): ViewArtifact[] {
  const shots = (run.artifacts ?? []).filter((a) => a.kind === 'screenshot');
  const failure = run.status === 'failed' || run.status === 'error' ? failureScreenshot(run) : undefined;
  return failure ? [failure, ...shots.filter((a) => a.id !== failure.id)] : shots;
}

/** The viewer's caption of a screenshot: `Step 3 of 4: click "text=Sign in" (failed)`, else its file name. */
function viewerCaption(run: ViewRun, a: ViewArtifact): string {
  const steps = run.steps ?? [];
  const step = steps.find((s) => s.screenshotId === a.id) ?? steps.find((s) => s.index === a.stepIndex);
  const index = step?.index ?? a.stepIndex;
  if (index === null) return a.name;
  const where = `Step ${index}${run.plannedSteps ? ` of ${run.plannedSteps}` : ''}`;
  return step ? `${where}: ${redactCredentials(step.label)} (${step.outcome})` : where;
}

/**
 * What the viewer reads off a thumbnail: the sequence it belongs to (one per run and test attempt,
 * so runs and attempts never mix), its place in that sequence, and its caption.
 */
function viewerAttributes(run: ViewRun, a: ViewArtifact): SafeHtml {
  const order = viewerSequence(run).findIndex((s) => s.id === a.id);
  const title = run.retries > 0 ? `${run.testName}, attempt ${run.retry + 1}` : run.testName;
  return html`data-viewer="${run.id}:${run.retry}" data-viewer-order="${order}" data-viewer-title="${title}"
  data-viewer-caption="${viewerCaption(run, a)}"`;
}

function thumbnail(p: Paths, run: ViewRun, a: ViewArtifact, alt: string, size: 'thumb' | 'large'): SafeHtml {
  const href = artifactPath(p, run, a.id);
  return html`<a
    class="shot shot-${size}"
    href="${href}"
    target="_blank"
    rel="noopener noreferrer"
    ${viewerAttributes(run, a)}
    ><img src="${href}" alt="${alt}" loading="lazy" decoding="async"
  /></a>`;
}

/** What stands where an artifact was once retention deleted it. */
function expiredMark(what: string): SafeHtml {
  return html`<span class="expired" title="${what} expired: deleted after the retention period">expired</span>`;
}

/** The note of a run whose artifacts retention deleted, with when. */
function expiredNote(run: ViewRun): SafeHtml {
  return html`<p class="muted expired-note">
    Expired: the screenshots, trace and video of this run were deleted on
    ${run.artifactsExpiredAt ? formatInstant(run.artifactsExpiredAt) : ''}, after the retention period.
  </p>`;
}

/** Where and why a failed or errored run went wrong, with the screenshot of that moment. */
function failureCallout(p: Paths, run: ViewRun, level: Heading): SafeHtml {
  const steps = run.steps ?? [];
  const step = steps.find((s) => s.index === run.outcomeStep);
  const verdict = run.status === 'failed' ? 'Failed' : 'Error';
  const where = run.outcomeStep
    ? `${verdict} at step ${run.outcomeStep}${run.plannedSteps ? ` of ${run.plannedSteps}` : ''}${step ? `: ${step.label}` : ''}`
    : run.status === 'failed'
      ? 'Failed'
      : 'The run could not complete';
  const shot = failureScreenshot(run);
  const why = run.outcomeMessage ?? step?.error ?? run.resultSummary;
  return html`<section
    class="callout callout-${run.status}"
    aria-label="${verdict === 'Failed' ? 'Failure' : 'Error'} of ${run.testName}"
  >
    <div class="callout-text">
      ${heading(level, where)}
      <p class="why">${redactCredentials(why)}</p>
      ${run.outcomeCode ? html`<p class="code">${describeCode(run.outcomeCode)} <code>${run.outcomeCode}</code></p>` : ''}
      ${step && step.expected !== null && step.received !== null ? comparisonBlock(COMPARED[step.action] ?? 'value', redactCredentials(step.expected), redactCredentials(step.received)) : ''}
      ${step ? pageAtFailure(step) : ''}
    </div>
    ${
      shot
        ? html`<figure class="callout-shot">
            ${thumbnail(p, run, shot, `Screenshot at ${step ? `step ${step.index}` : 'the end of the run'} of ${run.testName}`, 'large')}
            <figcaption>
              The page when it went wrong${shot.stepIndex ? ` (step ${shot.stepIndex})` : ''}. Select to open full size.
            </figcaption>
          </figure>`
        : run.artifactsExpiredAt
          ? html`<figure class="callout-shot">${expiredMark('The screenshot')}</figure>`
          : ''
    }
  </section>`;
}

/** What an expectation step compares, for the labels of its expected and received values. */
const COMPARED: Readonly<Record<string, string>> = { expectText: 'text', expectUrl: 'URL', expectTitle: 'title' };

/** The page's address and title when the step went wrong. */
function pageAtFailure(step: ViewStep): SafeHtml {
  if (step.pageUrl === null) return html``;
  return html`<dl class="page-at">
    <div>
      <dt>Page</dt>
      <dd><code>${redactCredentials(step.pageUrl)}</code></dd>
    </div>
    <div>
      <dt>Title</dt>
      <dd>${step.pageTitle ? step.pageTitle : html`<span class="muted">(none)</span>`}</dd>
    </div>
  </dl>`;
}

const EVENT_KINDS: Readonly<Record<ViewPageEvent['kind'], string>> = {
  console: 'Console error',
  exception: 'Uncaught exception',
  request: 'Failed request',
};

/**
 * What the run's pages reported: console errors, uncaught exceptions and failed requests (status
 * 400 or more, or no answer), in the order they happened, each at its time into the run.
 */
function pageEventsSection(run: ViewRun, level: Heading): SafeHtml {
  const events = run.pageEvents ?? [];
  if (events.length === 0) return html``;
  const t0 = run.startedAt?.getTime() ?? events[0]?.at.getTime() ?? 0;
  const count = (kind: ViewPageEvent['kind']) => events.filter((e) => e.kind === kind).length;
  const tally = [
    `${count('console') + count('exception')} console error${count('console') + count('exception') === 1 ? '' : 's'}`,
    `${count('request')} failed request${count('request') === 1 ? '' : 's'}`,
  ].join(', ');
  return html`<section class="page-events">
    ${heading(level, html`Console and network <span class="muted">(${tally})</span>`)}
    <div class="table-wrap">
      <table class="events">
        <thead>
          <tr>
            <th scope="col">At</th>
            <th scope="col">Kind</th>
            <th scope="col">What</th>
          </tr>
        </thead>
        <tbody>
          ${events.map(
            (e) =>
              html`<tr class="event-${e.kind}">
                <td class="num">+${formatDuration(Math.max(0, e.at.getTime() - t0))}</td>
                <td>${EVENT_KINDS[e.kind]}</td>
                <td>
                  ${
                    e.kind === 'request'
                      ? html`<code>${e.method ?? ''} ${redactCredentials(e.url ?? '')}</code> →
                          ${e.status === null ? html`${redactCredentials(e.message)}` : html`<strong>${e.status}</strong> ${e.message}`}`
                      : html`<span class="event-message">${redactCredentials(e.message)}</span>${
                            e.url ? html` <span class="muted">at <code>${redactCredentials(e.url)}</code></span>` : ''
                          }`
                  }
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}

/** A step's label with its action set apart: `goto "/"` reads as <code>goto</code> "/". */
function stepLabel(action: string, label: string): SafeHtml {
  const rest = label.startsWith(action) ? label.slice(action.length).trimStart() : label;
  return html`<code class="action">${action}</code> ${rest}`;
}

function stepRow(p: Paths, run: ViewRun, s: ViewStep, clock: { t0: number; span: number }): SafeHtml {
  const x = ((s.startedAt.getTime() - clock.t0) / clock.span) * 100;
  const w = Math.max((s.durationMs / clock.span) * 100, 0.4);
  const shot = stepScreenshot(run, s);
  return html`<tr class="step step-${s.outcome}">
      <td class="num">${s.index}</td>
      <th scope="row" class="label">${stepLabel(s.action, redactCredentials(s.label))}</th>
      <td class="target">${s.target ? html`<code>${redactCredentials(s.target)}</code>` : ''}</td>
      <td>${chip(s.outcome)}</td>
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
        ${
          shot
            ? thumbnail(p, run, shot, `Screenshot after step ${s.index}: ${s.label}`, 'thumb')
            : s.screenshotId && run.artifactsExpiredAt
              ? expiredMark('The screenshot')
              : ''
        }
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
}

/**
 * The steps as a table with a bar per step, placed and sized to scale on the run's own clock. The
 * worker records the steps after the one that went wrong as `skipped`, so the table is whole; the
 * heading counts the rows against the test's steps (fewer only when an attempt was cut off).
 */
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
  const clock = { t0, span: Math.max(t1 - t0, 1) };
  const count = `${steps.length}${run.plannedSteps ? ` of ${run.plannedSteps}` : ''}`;
  return html`<section class="timeline">
    ${heading(level, html`Steps <span class="muted">(${count}, ${formatDuration(clock.span)} on the timeline)</span>`)}
    <div class="table-wrap">
      <table class="steps">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Step</th>
            <th scope="col" class="target">Target</th>
            <th scope="col">Outcome</th>
            <th scope="col">Duration</th>
            <th scope="col" class="bar-cell">Timeline</th>
            <th scope="col">Screenshot</th>
          </tr>
        </thead>
        <tbody>
          ${steps.map((s) => stepRow(p, run, s, clock))}
        </tbody>
      </table>
    </div>
  </section>`;
}

function recording(p: Paths, run: ViewRun, level: Heading): SafeHtml {
  const artifacts = run.artifacts ?? [];
  const videos = artifacts.filter((a) => a.kind === 'video');
  const traces = artifacts.filter((a) => a.kind === 'trace');
  if (videos.length === 0 && traces.length === 0) {
    if (!isTerminalRunStatus(run.status) || run.status === 'skipped') return html``;
    if (run.artifactsExpiredAt)
      return html`<section class="recording">
        ${heading(level, 'Recording')} ${expiredMark('The recording')} ${expiredNote(run)}
      </section>`;
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

/** Every screenshot of a run, for its own page. */
export function screenshotGallery(p: Paths, run: ViewRun, level: Heading): SafeHtml {
  const shots = (run.artifacts ?? []).filter((a) => a.kind === 'screenshot');
  if (shots.length === 0 && run.artifactsExpiredAt)
    return html`<section class="gallery">${heading(level, 'Screenshots')} ${expiredMark('The screenshots')}</section>`;
  if (shots.length === 0) return html``;
  return html`<section class="gallery">
    ${heading(level, 'Screenshots')}
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

/** "Skipped: Test disabled test_disabled." */
export function skipNote(run: ViewRun): SafeHtml {
  return html`<p class="skip">
    Skipped${run.skipReason ? html`: ${describeCode(run.skipReason)} <code>${run.skipReason}</code>` : ''}.
  </p>`;
}

/** The body of one run: why it went wrong, its step timeline and its recording. Also served alone as a fragment. */
export function renderRunDetails(p: Paths, run: ViewRun, level: Heading): SafeHtml {
  return html`<div class="run-details">
    ${run.status === 'failed' || run.status === 'error' ? failureCallout(p, run, level) : ''}
    ${run.status === 'skipped' ? skipNote(run) : stepTimeline(p, run, level)} ${pageEventsSection(run, level)}
    ${recording(p, run, level)}
  </div>`;
}
