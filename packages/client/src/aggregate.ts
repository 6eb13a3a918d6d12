import { deriveSuiteStatus, type RunStatus, type SuiteCounts, type SuiteRunStatus } from '@testrun/contracts';

/** How many runs are in each status. */
export type StatusCounts = SuiteCounts;

const NONE: Omit<StatusCounts, 'total'> = { queued: 0, running: 0, passed: 0, failed: 0, error: 0, skipped: 0 };

export function countStatuses(statuses: readonly RunStatus[]): StatusCounts {
  const counts: StatusCounts = { total: statuses.length, ...NONE };
  for (const s of statuses) counts[s] += 1;
  return counts;
}

/**
 * The status of a group of runs by the rule the service applies to a suite run
 * (`deriveSuiteStatus` of the contracts). Used for a project,
 * which has no suite run of its own, so it reads the same as a suite.
 */
export function aggregateStatus(statuses: readonly RunStatus[]): SuiteRunStatus {
  const counts = countStatuses(statuses);
  return counts.total === 0 ? 'skipped' : deriveSuiteStatus(counts);
}
