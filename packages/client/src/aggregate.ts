import {
  countStatuses,
  deriveSuiteStatus,
  type RunStatus,
  type SuiteCounts,
  type SuiteRunStatus,
} from '@testrun/contracts';

/** How many runs are in each status. */
export type StatusCounts = SuiteCounts;

export { countStatuses };

/**
 * The status of a group of runs by the rule the service applies to a suite run
 * (`deriveSuiteStatus` of the contracts). Used for a project,
 * which has no suite run of its own, so it reads the same as a suite.
 */
export function aggregateStatus(statuses: readonly RunStatus[]): SuiteRunStatus {
  const counts = countStatuses(statuses);
  return counts.total === 0 ? 'skipped' : deriveSuiteStatus(counts);
}
