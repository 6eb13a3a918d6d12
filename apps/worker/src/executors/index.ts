// The worker's executors, one registry entry per kind of test (runs.kind), each made with what it
// needs: adding a kind of test is one folder under executors/ and one entry here.
import { executeMember, executeRun as executeWith } from '../run/execute-run';
import type { Executors, JobWatch } from '../run/executor';
import type { RunDeps, RunExecution } from '../run/run-deps';
import { PLAYWRIGHT_KIND, playwrightExecutor, playwrightJobWatch, type PlaywrightRuntime } from './playwright';
import { stepsExecutor, type StepsExecutorDeps } from './steps';

/** What the worker's executors are made with: the steps executor's parts, and the Playwright runtime. */
export interface ExecutorParts extends StepsExecutorDeps {
  /** Bundles, sandbox and egress of Playwright runs (service/playwright-tasks.ts). Default none: they end `error`. */
  playwright?: PlaywrightRuntime;
}

/**
 * The lifecycle's dependencies with the worker's executors made from `parts`: a batch's members
 * are recorded through the lifecycle's port for them (RunMember, run/execute-run.ts executeMember).
 */
export function workerRunDeps(base: Omit<RunDeps, 'executors'>, parts: ExecutorParts): RunDeps {
  const { playwright } = parts;
  const executors: Executors = {
    steps: stepsExecutor({ store: base.store, ...parts }),
    [PLAYWRIGHT_KIND]: playwrightExecutor({
      runtime: playwright,
      scratchDir: parts.scratchDir,
      limits: parts.limits,
      runMember: (runId, batch) => executeMember(deps, runId, batch),
    }),
  };
  const jobs: JobWatch | undefined = base.jobs ?? (playwright && playwrightJobWatch(playwright));
  const deps: RunDeps = { ...base, executors, ...(jobs ? { jobs } : {}) };
  return deps;
}

/** What {@link executeRun} needs: the lifecycle's dependencies and the executors' parts, or executors already made. */
export type RunDepsInput = Omit<RunDeps, 'executors'> & (ExecutorParts | Pick<RunDeps, 'executors'>);

/** Executes one run (see run/execute-run.ts) with the worker's executors unless given others. */
export function executeRun(input: RunDepsInput, runId: string): Promise<RunExecution> {
  return executeWith('executors' in input ? input : workerRunDeps(input, input), runId);
}
