import { executeRun as executeWith } from '../run/execute-run';
import type { RunDeps, RunExecution } from '../run/run-deps';
import type { Executors } from './executor';
import { playwrightExecutor } from './playwright/playwright-executor';
import { stepsExecutor } from './steps';

/** The worker's executors, one per kind of test. */
export const EXECUTORS: Executors = { steps: stepsExecutor, playwright: playwrightExecutor };

/** What {@link executeRun} needs: RunDeps, whose executors default to {@link EXECUTORS}. */
export type RunDepsInput = Omit<RunDeps, 'executors'> & Partial<Pick<RunDeps, 'executors'>>;

/** Executes one run (see run/execute-run.ts) with the worker's executors unless given others. */
export function executeRun(deps: RunDepsInput, runId: string): Promise<RunExecution> {
  return executeWith({ ...deps, executors: deps.executors ?? EXECUTORS }, runId);
}
