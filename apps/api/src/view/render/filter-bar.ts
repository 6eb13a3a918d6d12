import { FILTER_STATUSES, filtered, MAX_QUERY_LENGTH, type FilterStatus, type SuiteFilter } from '../filters';
import type { ViewSuiteRun } from '../model';
import { html, type SafeHtml } from './html';

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
