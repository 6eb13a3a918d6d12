import { formatDuration, isTerminalRunStatus } from '@testrun/contracts';
import type { ViewAttempt, ViewRun } from '../model';
import { screenshotGallery } from './evidence';
import { redactCredentials } from './format';
import { html, type SafeHtml } from './html';
import { chip, type Paths } from './layout';
import { renderRunDetails } from './run-details';

// A run page's test attempts: one tab per attempt of a retried run, as in Playwright's report.

/**
 * "2 of up to 3": the test attempt the run is at, and how many it may take; past the run's own
 * retries, the tries its Playwright config made (how many it allows is the config's).
 */
export function attemptText(run: ViewRun): string {
  if (!run.attempt) return '–';
  if (run.retry > run.retries) return `${run.retry + 1}, as its Playwright config retries`;
  return run.retries > 0 ? `${run.retry + 1} of up to ${run.retries + 1}` : '1';
}

/** "Run" and "Retry #1", the names of a run's test attempts (as in Playwright's report). */
function attemptName(retry: number): string {
  return retry === 0 ? 'Run' : `Retry #${retry}`;
}

/** A retried attempt drawn as a run of its own: its outcome, steps and evidence. */
function attemptAsRun(run: ViewRun, a: ViewAttempt): ViewRun {
  return { ...run, ...a, earlierAttempts: null };
}

/**
 * The run's details; for a retried run, one tab per test attempt in the order they ran ("Run",
 * "Retry #1", …), each panel with that attempt's outcome, steps, screenshots and recording. The
 * last attempt, whose outcome is the run's, is the one selected. Without the script the tabs are
 * links to the panels, which all show, one after the other.
 */
export function runAttempts(p: Paths, run: ViewRun): SafeHtml {
  const earlier = run.earlierAttempts ?? [];
  if (earlier.length === 0) return html`${renderRunDetails(p, run, 2)} ${screenshotGallery(p, run, 2)}`;
  const attempts = [...earlier.map((a) => attemptAsRun(run, a)), run];
  const last = run.retry;
  return html`<section class="attempts" aria-labelledby="attempts-heading">
    <h2 id="attempts-heading">Attempts <span class="muted">(${attempts.length})</span></h2>
    <ul class="attempt-tabs" data-tabs>
      ${attempts.map(
        (r) =>
          html`<li>
            <a
              class="attempt-tab"
              id="attempt-tab-${r.retry}"
              href="#attempt-${r.retry}"
              data-tab="attempt-${r.retry}"
              ${r.retry === last ? html`aria-current="true"` : ''}
              >${attemptName(r.retry)} ${chip(r.status)}</a
            >
          </li>`,
      )}
    </ul>
    ${attempts.map(
      (r) =>
        html`<section class="attempt" id="attempt-${r.retry}" data-panel aria-labelledby="attempt-${r.retry}-heading">
          <h3 id="attempt-${r.retry}-heading">
            ${attemptName(r.retry)}: ${chip(r.status)}
            <span class="muted"
              >${r.retry === last ? (isTerminalRunStatus(r.status) ? 'the last attempt' : 'in progress') : formatDuration(r.durationMs)}</span
            >
          </h3>
          <p class="summary">${redactCredentials(r.resultSummary)}</p>
          ${renderRunDetails(p, r, 4)} ${screenshotGallery(p, r, 4)}
        </section>`,
    )}
  </section>`;
}
