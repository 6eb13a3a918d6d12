import type { ViewRun } from './model';

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
export const FILTER_STATUSES = ['all', 'failed', 'error', 'flaky', 'passed', 'skipped', 'running', 'queued'] as const;
export type FilterStatus = (typeof FILTER_STATUSES)[number];

/** The longest search kept: a longer one is cut, never an error (the page only narrows a list). */
export const MAX_QUERY_LENGTH = 200;

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

/** Whether the filter narrows anything. */
export function filtered(filter: SuiteFilter): boolean {
  return filter.status !== 'all' || filter.q !== '';
}

/** Whether a suite page renders a run's steps inline: everything except passes and skips. */
export function showsDetailsInline(run: Pick<ViewRun, 'status'>): boolean {
  return run.status !== 'passed' && run.status !== 'skipped';
}
