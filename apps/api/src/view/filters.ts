import { html, type SafeHtml } from './html';
import type { ViewRun, ViewSuiteRun } from './model';

/**
 * What a suite page's list is narrowed to: a status chip and a search. Both live in the page's URL
 * (`?status=failed&q=checkout`), so a filtered view is a link to share and survives a reload; the
 * server renders the filtered list, and the page's script narrows it again as people type or pick a
 * chip, without a round trip.
 */
export type SuiteFilter = { status: FilterStatus; q: string };

/**
 * The chips, in the order the page shows them. `flaky` is the passed tests that passed only on a
 * retry (they count among the passed too); `running` and `queued` appear while a suite is live.
 */
const FILTER_STATUSES = ['all', 'failed', 'error', 'flaky', 'passed', 'skipped', 'running', 'queued'] as const;
type FilterStatus = (typeof FILTER_STATUSES)[number];

const CHIP_TITLES: Readonly<Record<FilterStatus, string>> = {
  all: 'All',
  failed: 'Failed',
  error: 'Error',
  flaky: 'Flaky',
  passed: 'Passed',
  skipped: 'Skipped',
  running: 'Running',
  queued: 'Queued',
};

/** The longest search kept: a longer one is cut, never an error (the page only narrows a list). */
const MAX_QUERY_LENGTH = 200;

function isFilterStatus(value: unknown): value is FilterStatus {
  return typeof value === 'string' && (FILTER_STATUSES as readonly string[]).includes(value);
}

/** The filter a page's query string asks for; anything unknown or malformed means no filter. */
export function readSuiteFilter(query: Record<string, unknown>): SuiteFilter {
  const q = typeof query.q === 'string' ? query.q.trim().slice(0, MAX_QUERY_LENGTH) : '';
  return { status: isFilterStatus(query.status) ? query.status : 'all', q };
}

/** What the search looks through, lowercased: the test's name, summary and error, and its steps' labels and errors. */
export function searchText(run: Pick<ViewRun, 'testName' | 'resultSummary' | 'outcomeMessage'>, steps = ''): string {
  return [run.testName, run.resultSummary, run.outcomeMessage ?? '', steps].join('\n').toLowerCase();
}

/** A run is flaky when it passed on a retry: an earlier attempt failed or ended in error. */
export function isFlaky(run: Pick<ViewRun, 'status' | 'retry'>): boolean {
  return run.status === 'passed' && run.retry > 0;
}

/** Whether a run stays in the list under the filter; `text` is its {@link searchText}. */
export function matchesFilter(run: Pick<ViewRun, 'status' | 'retry'>, text: string, filter: SuiteFilter): boolean {
  if (filter.status === 'flaky' ? !isFlaky(run) : filter.status !== 'all' && run.status !== filter.status) return false;
  return filter.q === '' || text.includes(filter.q.toLowerCase());
}

function chipHref(status: FilterStatus, q: string): string {
  const params = new URLSearchParams();
  if (status !== 'all') params.set('status', status);
  if (q) params.set('q', q);
  const query = params.toString();
  return query ? `?${query}` : '?';
}

/**
 * The search box and the status chips with their counts. Chips are links (they work without the
 * script and from the keyboard); the current one carries `aria-current`. Counts are the suite's
 * counters, which the live updates keep current (`data-chip-count`).
 */
export function filterBar(suite: ViewSuiteRun, filter: SuiteFilter, shown: number, searchIndex: string): SafeHtml {
  const c = suite.counts;
  const count = (s: FilterStatus): number => (s === 'all' ? c.total : c[s]);
  const chips = FILTER_STATUSES.filter(
    (s) => s === filter.status || !(s === 'running' || s === 'queued') || count(s) > 0,
  );
  return html`<section class="filters" aria-label="Filter the tests">
    <div class="search">
      <label for="filter-q">Search tests, steps and errors</label>
      <input
        id="filter-q"
        type="search"
        value="${filter.q}"
        maxlength="${MAX_QUERY_LENGTH}"
        autocomplete="off"
        spellcheck="false"
        data-search-index="${searchIndex}"
      />
    </div>
    <nav aria-label="Show tests by status">
      <ul class="filter-chips">
        ${chips.map(
          (s) =>
            html`<li>
              <a
                class="filter-chip filter-${s}"
                href="${chipHref(s, filter.q)}"
                data-filter="${s}"
                ${s === filter.status ? html`aria-current="true"` : ''}
                >${CHIP_TITLES[s]} <span class="n" data-chip-count="${s === 'all' ? 'total' : s}">${count(s)}</span></a
              >
            </li>`,
        )}
      </ul>
    </nav>
    <p class="filter-note" id="filter-note" role="status" aria-live="polite">
      ${filtered(filter) ? `Showing ${shown} of ${c.total} tests.` : ''}
    </p>
  </section>`;
}

/** Whether the filter narrows anything. */
export function filtered(filter: SuiteFilter): boolean {
  return filter.status !== 'all' || filter.q !== '';
}
