// The templates of one run's detail: why it went wrong, its steps and its page events. Its evidence
// (screenshots, video, trace) is evidence.ts's.
import { formatDuration } from '@testrun/contracts';
import { attachmentsSection } from './attachments';
import { comparisonBlock } from './compare';
import { describeCode, redactCredentials } from './format';
import { expiredMark, failureScreenshot, recording, stepScreenshot, thumbnail } from './evidence';
import { html, type SafeHtml } from './html';
import { chip, heading, type Heading, type Paths } from './layout';
import type { ViewRun, ViewStep } from '../model';
import type { PageEvent } from '@testrun/contracts';

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

const EVENT_KINDS: Readonly<Record<PageEvent['kind'], string>> = {
  console: 'Console error',
  exception: 'Uncaught exception',
  request: 'Failed request',
  blocked: 'Blocked by the network policy',
};

/**
 * What the run's pages reported: console errors, uncaught exceptions and failed requests (status
 * 400 or more, or no answer), in the order they happened, each at its time into the run; and the
 * requests the network policy refused (their host and port, and the rule), whatever the verdict.
 */
function pageEventsSection(run: ViewRun, level: Heading): SafeHtml {
  const events = run.pageEvents ?? [];
  if (events.length === 0) return html``;
  const t0 = run.startedAt?.getTime() ?? events[0]?.at.getTime() ?? 0;
  const count = (kind: PageEvent['kind']) => events.filter((e) => e.kind === kind).length;
  const tally = [
    `${count('console') + count('exception')} console error${count('console') + count('exception') === 1 ? '' : 's'}`,
    `${count('request')} failed request${count('request') === 1 ? '' : 's'}`,
    ...(count('blocked') > 0
      ? [`${count('blocked')} request${count('blocked') === 1 ? '' : 's'} blocked by the network policy`]
      : []),
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
                    e.kind === 'blocked'
                      ? html`<code>${redactCredentials(e.url ?? '')}</code> → ${redactCredentials(e.message)}`
                      : e.kind === 'request'
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

/** How a step row folds: a hook or fixture with steps inside is folded unless one of them went wrong. */
type Fold = { open: boolean; inside: number } | null;

/**
 * The fold of each row, as Playwright's report folds its steps: a hook's or a fixture's steps are
 * folded, unless the failing path goes through them (a step inside did not pass), which stays open;
 * a test.step's nesting is always shown.
 */
function foldsOf(steps: readonly ViewStep[]): Fold[] {
  return steps.map((s, i) => {
    if (s.action !== 'hook' && s.action !== 'fixture') return null;
    let end = i + 1;
    while (end < steps.length && (steps[end]?.depth ?? 0) > s.depth) end += 1;
    if (end === i + 1) return null;
    return { open: steps.slice(i, end).some((inner) => inner.outcome !== 'passed'), inside: end - i - 1 };
  });
}

/** The button that folds and unfolds a hook's or fixture's steps (the page's script shows it and wires it). */
function foldButton(fold: NonNullable<Fold>): SafeHtml {
  return html`<button type="button" class="fold" aria-expanded="${fold.open ? 'true' : 'false'}" hidden>
    <span aria-hidden="true">▸</span><span class="visually-hidden">Steps inside (${fold.inside})</span>
  </button>`;
}

function stepRow(
  p: Paths,
  run: ViewRun,
  s: ViewStep,
  clock: { t0: number; span: number },
  fold: Fold = null,
): SafeHtml {
  const x = ((s.startedAt.getTime() - clock.t0) / clock.span) * 100;
  const w = Math.max((s.durationMs / clock.span) * 100, 0.4);
  const shot = stepScreenshot(run, s);
  return html`<tr
      class="step step-${s.outcome}"
      data-depth="${s.depth}"
      ${fold ? html`data-fold="${fold.open ? 'open' : 'closed'}"` : ''}
    >
      <td class="num">${s.index}</td>
      <th scope="row" class="label depth-${Math.min(s.depth, 6)}">
        ${fold ? foldButton(fold) : ''}${stepLabel(s.action, redactCredentials(s.label))}
      </th>
      <td class="target">
        ${s.target ? html`<code>${redactCredentials(s.target)}</code>` : s.location ? html`<code class="muted">${s.location}</code>` : ''}
      </td>
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
  const folds = foldsOf(steps);
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
          ${steps.map((s, i) => stepRow(p, run, s, clock, folds[i]))}
        </tbody>
      </table>
    </div>
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
    ${recording(p, run, level)} ${attachmentsSection(p, run, level)}
  </div>`;
}
