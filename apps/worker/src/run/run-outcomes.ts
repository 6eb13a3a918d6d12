import { compileValidator, JOBS, StepSchema, type Step } from '@testrun/contracts';
import { ArtifactStoreUnavailableError } from '@testrun/core/artifact-store';
import { errorMessage } from '@testrun/core/logger';
import type { AbortOutcome, RunOutcome } from '@testrun/core/runs';
import { isPermanentWriteError } from './retry-write';
import { summarizeFailure } from './describe-step';
import type { StepOutcomeResult } from './step-outcome';

/** A run is started at most this many times: the first try plus one retry after its worker was lost. */
export const MAX_RUN_ATTEMPTS = JOBS.run.maxStalledCount + 1;

/** The terminal state of a run whose worker died on its last allowed attempt. */
export function workerLostOutcome(attempts: number): AbortOutcome {
  return {
    code: 'worker_lost',
    message: `the worker running this test stopped responding (attempt ${attempts} of ${MAX_RUN_ATTEMPTS}); it was not retried again`,
    resultSummary: `Error: the worker running this test was lost ${attempts === 1 ? 'once' : `${attempts} times`}; the run was not retried again.`,
  };
}

/** BullMQ's reason for a job whose worker died more often than `maxStalledCount` allows. */
const STALLED_TOO_OFTEN = /stalled more than allowable limit/i;

/** Whether a failed run job's reason says its worker was lost (it died, or stopped renewing its lock). */
export function isWorkerLost(failedReason: string | undefined): boolean {
  return STALLED_TOO_OFTEN.test(failedReason ?? '');
}

/** What could not record a run's outcome; the start of its job's failed reason (see {@link notRecordedError}). */
const NOT_RECORDED = {
  database: 'outcome not recorded: the database was unavailable',
  refused: 'outcome not recorded: the database refused a write',
  store: 'outcome not recorded: the artifact store was unavailable',
} as const;

/**
 * The error a run job fails with when its worker, alive, gave up recording the run (executeRun
 * threw: its writes kept failing past WORKER_WRITE_RETRY_MS, or were refused), saying which.
 */
export function notRecordedError(error: unknown): Error {
  const cause =
    error instanceof ArtifactStoreUnavailableError ? 'store' : isPermanentWriteError(error) ? 'refused' : 'database';
  return new Error(`${NOT_RECORDED[cause]}: ${errorMessage(error)}`, { cause: error });
}

/**
 * The terminal state of a running run whose job failed: `worker_lost` when its worker was lost on
 * its last attempt, else an `internal_error` that says what kept its worker from recording it.
 */
export function failedJobOutcome(failedReason: string | undefined, attempts: number): AbortOutcome {
  if (isWorkerLost(failedReason)) return workerLostOutcome(attempts);
  const reason = failedReason ?? '';
  const what = reason.startsWith(NOT_RECORDED.store)
    ? 'the artifact store was unavailable'
    : reason.startsWith(NOT_RECORDED.refused)
      ? 'the database refused one of its writes'
      : 'the database was unavailable';
  const tail = reason.startsWith(NOT_RECORDED.refused)
    ? ''
    : ' for longer than its worker kept trying (WORKER_WRITE_RETRY_MS)';
  return {
    code: 'internal_error',
    message: `the worker running this test could not record its outcome: ${what}${tail}`,
    resultSummary: `Error: the run's outcome could not be recorded: ${what}.`,
  };
}

const validateStep = compileValidator(StepSchema);

/** Checks a run's step snapshot: its steps, or the first problem as `step N: reason`. */
export function checkDefinition(steps: unknown): { steps: Step[] } | { problem: string } {
  if (!Array.isArray(steps) || steps.length === 0) return { problem: 'the test has no steps' };
  const valid: Step[] = [];
  for (const [i, candidate] of steps.entries()) {
    const checked = validateStep(candidate);
    if (!checked.ok) {
      const first = checked.errors[0];
      const where = first?.path ? ` (${first.path.replace(/^\//, '')})` : '';
      return { problem: `step ${i + 1}${where}: ${first?.message ?? 'is invalid'}` };
    }
    valid.push(checked.value);
  }
  return { steps: valid };
}

export function invalidDefinitionOutcome(problem: string): RunOutcome {
  return {
    status: 'error',
    code: 'invalid_definition',
    message: problem,
    resultSummary: `Error: the test definition is invalid (${problem}).`,
  };
}

export function headersUnreadableOutcome(): RunOutcome {
  return {
    status: 'error',
    code: 'internal_error',
    message:
      "the run's request headers could not be decrypted (is TESTRUN_SECRET the same for the API and the worker?)",
    resultSummary: "Error: the run's request headers could not be decrypted.",
  };
}

export function noContextOutcome(error: unknown): RunOutcome {
  return {
    status: 'error',
    code: 'browser_crashed',
    message: `the browser could not open a context: ${errorMessage(error)}`,
    resultSummary: 'Error: the browser could not be started for this run.',
  };
}

/** A run this worker cannot run, for the reason given (a kind it has no executor for, a batch that lost its leader). */
export function cannotRunOutcome(reason: string): RunOutcome {
  return { status: 'error', code: 'internal_error', message: reason, resultSummary: `Error: ${reason}.` };
}

export function internalErrorOutcome(error: unknown): RunOutcome {
  return {
    status: 'error',
    code: 'internal_error',
    message: `the worker hit an unexpected problem: ${errorMessage(error)}`,
    resultSummary: 'Error: the worker hit an unexpected problem and could not complete the run.',
  };
}

/** The run's outcome from its first step that did not pass (1-based `index`). */
export function stepProblemOutcome(index: number, step: Step, result: StepOutcomeResult): RunOutcome | null {
  const details = { message: result.message, step: index, resultSummary: summarizeFailure(index, step, result) };
  switch (result.outcome) {
    case 'passed':
      return null;
    case 'failed':
      return { status: 'failed', code: result.code, ...details };
    case 'error':
      return { status: 'error', code: result.code, ...details };
  }
}
