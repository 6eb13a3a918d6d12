import { formatInstant } from './format';
import { html, type SafeHtml } from './html';
import { heading, runPath, type Heading, type Paths } from './layout';
import type { ViewHistory, ViewHistoryMark, ViewRun } from '../model';

const OUTCOME_WORDS: Record<ViewHistoryMark['status'], string> = {
  passed: 'passed',
  failed: 'failed',
  error: 'error',
};

/** The mark's accessible name: "passed (flaky), 2026-11-22 10:04:31 UTC, this run". */
function markName(mark: ViewHistoryMark): string {
  const outcome = mark.flaky ? 'passed (flaky: on a retry)' : OUTCOME_WORDS[mark.status];
  return `${outcome}, ${formatInstant(mark.at)}${mark.current ? ', this run' : ''}`;
}

function markKind(mark: ViewHistoryMark): string {
  return mark.flaky ? 'flaky' : mark.status;
}

function markItem(p: Paths, mark: ViewHistoryMark): SafeHtml {
  const cls = `hist-mark hist-${markKind(mark)}${mark.current ? ' hist-current' : ''}`;
  const name = markName(mark);
  // The shape is the stylesheet's (a disc, a ring, a cross, a triangle), so a mark is a few bytes
  // of markup: a suite page can hold hundreds. A link's name is its title, shown on hover too.
  const body = mark.token
    ? html`<a
        class="${cls}"
        href="${runPath(p, { id: mark.id, token: mark.token })}"
        title="${name}"
        data-history-run="${mark.id}"
        ${mark.current ? html` aria-current="true"` : ''}
      ></a>`
    : html`<span
        class="${cls} hist-unlinked"
        title="${name}; not linked: view links were revoked"
        data-history-run="${mark.id}"
        ><span class="visually-hidden">${name}</span></span
      >`;
  return html`<li>${body}</li>`;
}

/**
 * "17 passed, 3 failed of the last 20: 85% passed". A pass only on a retry is no healthy pass, so
 * when some are flaky they are counted apart and the rate is the share that passed without one:
 * "15 passed first time, 2 flaky, 3 failed of the last 20: 75% passed without a retry (85% with retries)".
 */
function historyRate(marks: readonly ViewHistoryMark[]): string {
  const count = (s: ViewHistoryMark['status']) => marks.filter((m) => m.status === s).length;
  const percent = (n: number) => `${Math.round((n / marks.length) * 100)}%`;
  const passed = count('passed');
  const flaky = marks.filter((m) => m.flaky).length;
  const parts = [flaky ? `${passed - flaky} passed first time, ${flaky} flaky` : `${passed} passed`];
  if (count('failed')) parts.push(`${count('failed')} failed`);
  if (count('error')) parts.push(`${count('error')} ${count('error') === 1 ? 'error' : 'errors'}`);
  const of = marks.length === 1 ? 'of 1 run' : `of the last ${marks.length}`;
  const rate = flaky
    ? `${percent(passed - flaky)} passed without a retry (${percent(passed)} with retries)`
    : `${percent(passed)} passed`;
  return `${parts.join(', ')} ${of}: ${rate}`;
}

/**
 * The test's history as a strip of marks, oldest to newest, each a link to that run's page, with
 * the pass, fail and flaky rate. Nothing when the history was not loaded for this run.
 */
export function historySection(p: Paths, run: Pick<ViewRun, 'id' | 'history'>, level: Heading): SafeHtml {
  const marks: ViewHistory | undefined = run.history;
  if (!marks) return html``;
  const title =
    marks.length === 0 ? 'History' : html`History <span class="muted">(last ${marks.length} of this test)</span>`;
  const content =
    marks.length === 0
      ? html`<p class="muted">No run of this test has finished yet.</p>`
      : html`<ol class="history-marks" aria-label="Outcomes of this test, oldest first">
            ${marks.map((m) => markItem(p, m))}
          </ol>
          <p class="history-rate">${historyRate(marks)}</p>`;
  // A region of its own on a run's page; inside a test of a suite page, part of that test (a
  // region per test would be many landmarks of one name).
  if (level === 3) return html`<div class="history">${heading(3, title)} ${content}</div>`;
  const id = `history-${run.id}`;
  return html`<section class="history" aria-labelledby="${id}">${heading(2, title, id)} ${content}</section>`;
}
