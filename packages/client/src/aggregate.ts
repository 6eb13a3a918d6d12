import { isTerminalRunStatus, type RunStatus, type SuiteRunStatus } from '@testrun/contracts';

/** How many runs are in each status. */
export interface StatusCounts {
  total: number;
  queued: number;
  running: number;
  passed: number;
  failed: number;
  error: number;
  skipped: number;
}

export function countStatuses(statuses: readonly RunStatus[]): StatusCounts {
  const counts: StatusCounts = { total: statuses.length, queued: 0, running: 0, passed: 0, failed: 0, error: 0, skipped: 0 };
  for (const s of statuses) counts[s] += 1;
  return counts;
}

/**
 * The status of a group of runs by the rule the service applies to a suite run: `queued` while
 * every run is queued; `running` until all are terminal; then `failed` if any failed, else
 * `error` if any errored, else `skipped` if all were skipped, else `passed`. Used for a project,
 * which has no suite run of its own, so it reads the same as a suite.
 */
export function aggregateStatus(statuses: readonly RunStatus[]): SuiteRunStatus {
  const c = countStatuses(statuses);
  if (c.total === 0) return 'skipped';
  if (c.queued === c.total) return 'queued';
  if (!statuses.every(isTerminalRunStatus)) return 'running';
  if (c.failed > 0) return 'failed';
  if (c.error > 0) return 'error';
  if (c.skipped === c.total) return 'skipped';
  return 'passed';
}
