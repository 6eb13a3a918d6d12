import { readSql, type Db } from '@testrun/core/db';
import { formatInstant } from './format';
import { html, type SafeHtml } from './html';
import { heading, runPath, type Heading, type Paths } from './layout';
import type { LinkSigner, ViewHistory, ViewHistoryMark, ViewRun } from './model';
import { scopeSql, type RunScope } from './scope';

/** How many outcomes of a test its history shows. */
const HISTORY_LENGTH = 20;

type HistoryRow = {
  for_id: string;
  id: string;
  status: ViewHistoryMark['status'];
  retry: number;
  created_at: Date;
  finished_at: Date | null;
  linkable: boolean;
};

/**
 * For each run given, the last HISTORY_LENGTH outcomes (passed, failed, error) of its test up to and
 * including the run itself, newest first: the runs of the same test row (so of the same workspace)
 * that were created in the same suite, whichever request created them. One statement for all the
 * runs: a LATERAL subquery per run walks the index on runs(test_id, created_at, id) backwards from
 * the run and stops after HISTORY_LENGTH rows. A test row belongs to one workspace, so its runs
 * are that workspace's; the workspace is checked outside the subquery all the same, where it cannot
 * tempt the planner onto the workspace's index (with stale statistics it did, and read every run of
 * the workspace). `linkable` says whether a link signed with the
 * page's terms opens the run: its link version (its suite run's, its own outside a suite run) must be
 * the one of the run the page was opened for, so a revoked suite run stays closed.
 */
export function historySql(where: string): string {
  return `
  SELECT cur.id AS for_id, h.id, h.status, h.retry, h.created_at, h.finished_at,
    h.version = COALESCE(csr.view_token_version, cur.view_token_version) AS linkable
  FROM runs cur
  LEFT JOIN suite_runs csr ON csr.id = cur.suite_run_id
  CROSS JOIN LATERAL (
    SELECT r.id, r.workspace_id, r.status::text AS status, r.retry, r.created_at, r.finished_at,
      COALESCE((SELECT sr.view_token_version FROM suite_runs sr WHERE sr.id = r.suite_run_id), r.view_token_version) AS version
    FROM runs r
    WHERE r.test_id = cur.test_id
      AND r.suite_id = cur.suite_id
      AND r.status IN ('passed', 'failed', 'error')
      AND (r.created_at, r.id) <= (cur.created_at, cur.id)
    ORDER BY r.created_at DESC, r.id DESC
    LIMIT ${HISTORY_LENGTH}
  ) h
  WHERE ${where} AND h.workspace_id = cur.workspace_id`;
}

/** The history rows of the scope's runs (a suite page reads those it shows open; a run page, its run). */
export async function readHistory(db: Db, scope: RunScope): Promise<HistoryRow[]> {
  if ('runIds' in scope && scope.runIds.length === 0) return [];
  const { where, name, param } = scopeSql(scope, 'cur');
  return readSql<HistoryRow>(db, `view_test_history_${name}`, historySql(where), [param]);
}

/** Sets `history` on each run given from its rows, the marks' links signed by `sign` (the page's terms). */
export function attachHistory(sign: LinkSigner, runs: ViewRun[], rows: HistoryRow[]): void {
  const byRun = new Map<string, ViewHistoryMark[]>(runs.map((r) => [r.id, []]));
  for (const row of rows)
    byRun.get(row.for_id)?.push({
      id: row.id,
      token: row.linkable ? sign('run', row.id) : null,
      status: row.status,
      flaky: row.status === 'passed' && row.retry > 0,
      at: row.finished_at ?? row.created_at,
      createdAt: row.created_at,
      current: row.id === row.for_id,
    });
  for (const run of runs) {
    const marks = byRun.get(run.id) ?? [];
    // Newest first from the database; the strip reads oldest to newest.
    marks.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
    run.history = marks;
  }
}

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
