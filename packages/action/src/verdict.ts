import type { RunReport, SuiteRunStatus } from '@testrun/contracts';

/** The `status` output: the final status, or `timeout` / `api_error` when the wait or the API failed. */
export type Verdict = Exclude<SuiteRunStatus, 'queued' | 'running'> | 'timeout' | 'api_error';

/** How the step ended: the report when the API answered, else why there is none. */
export type Outcome =
  | { kind: 'report'; report: RunReport }
  | { kind: 'api_error'; code: string; detail: string }
  /** The inputs were refused before any request, or something unexpected broke. */
  | { kind: 'error'; detail: string };

export function verdictOf(outcome: Outcome): Verdict {
  if (outcome.kind !== 'report') return outcome.kind;
  const { report } = outcome;
  if (report.timedOut || report.status === 'queued' || report.status === 'running') return 'timeout';
  return report.status;
}

/** The exit code `testrun run` would give: 0 passed, 1 failed, 2 anything else. */
export function exitCodeOf(outcome: Outcome): number {
  return outcome.kind === 'report' ? outcome.report.exitCode : 2;
}

/** One line that says why the step ends the way it does. */
export function messageOf(outcome: Outcome): string {
  switch (outcome.kind) {
    case 'report':
      return outcome.report.message;
    case 'api_error':
      return `The API refused the request: ${outcome.code}: ${outcome.detail}`;
    case 'error':
      return outcome.detail;
  }
}
