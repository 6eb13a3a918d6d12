// Playwright Test as an executor (docs/PLAYWRIGHT.md): the run's definition names one test of a
// bundle the team deployed; the test runs with the service's Playwright Test runner in a sandbox
// (docs/SANDBOX.md), through the worker's egress proxy, and its result becomes the run's.
// The first attempt of a run of a suite run joins or leads a batch (batch/) of the suite
// run's runs: the tests then share one sandbox.
import { isPlaywrightDefinition } from '@testrun/contracts';
import type { RunOutcome } from '@testrun/core/runs';
import { cannotRunOutcome, invalidDefinitionOutcome } from '../../run/run-outcomes';
import type { Executor, ExecutorAttempt, ExecutorRun } from '../../run/executor';
import { recordMember, runInBatch } from './batch/run-in-batch';
import { BundleUnavailableError } from './caches/bundle-cache';
import { runAlone, type Definition, type ReadyAttempt } from './ready-attempt';
import type { PlaywrightRuntime } from './playwright-runtime';
import { sandboxedAttempt, type PlaywrightExecutorDeps, type SandboxedAttempt } from './sandboxed-attempt';
import {
  openRequestValues,
  playwrightSecrets,
  withStoredSecrets,
  type PlaywrightSecrets,
  type RequestValues,
} from './playwright-secrets';

type StoredRead = Parameters<typeof withStoredSecrets>[0];

/**
 * The Playwright executor, made with the worker's Playwright runtime: opens a run's secrets, then
 * runs its test in a sandbox, alone or in a batch whose members are recorded through `runMember`
 * with the executor of members: a member's first attempt records its test's result from the
 * batch's sandbox (batch/run-in-batch.ts recordMember); a retry of it runs as any run's attempt.
 */
export function playwrightExecutor(deps: PlaywrightExecutorDeps): Executor {
  const member: Executor = { prepare: (input) => Promise.resolve(prepare(input, deps, member, true)) };
  return { prepare: (input) => Promise.resolve(prepare(input, deps, member, false)) };
}

function prepare(
  { run, db, headersKey, retry }: ExecutorRun,
  deps: PlaywrightExecutorDeps,
  member: Executor,
  asMember: boolean,
): PrepareResult {
  if (!isPlaywrightDefinition(run.steps))
    return { outcome: invalidDefinitionOutcome('the run does not name a Playwright test') };
  const definition = run.steps.playwright;
  if (definition.browser !== 'chromium')
    return {
      outcome: {
        status: 'skipped',
        skipReason: 'browser_unavailable',
        resultSummary: `Skipped: project "${definition.project}" runs ${definition.browser}, and this service runs Chromium only.`,
      },
    };
  // The stored secrets are read as the attempt runs: a member of a batch has its batch's.
  const opened = openRequestValues(headersKey, run);
  if ('outcome' in opened) return opened;
  const { values } = opened;
  const read = { db, key: headersKey, retry };
  // Its own values' secrets, compiled once: a member of a batch is recorded with them.
  const own = playwrightSecrets(values);
  const execute = (attempt: ExecutorAttempt) => {
    const sandboxed = sandboxedAttempt(deps, attempt);
    const joined = asMember ? deps.runtime?.batches.take(run.id) : null;
    if (joined) return recordMember(sandboxed, joined.member, joined.batch, own);
    // A batch's members are recorded by the executor of members, under the target policy this attempt read.
    const runMember = (id: string, batchId: string) =>
      deps.runMember(id, { id: batchId, policy: attempt.policy, executor: member });
    return executeTest(sandboxed, deps.runtime, runMember, definition, { values, own }, read);
  };
  // Its sandbox goes out through a listener of its own (ready-attempt.ts, batch/run-in-batch.ts).
  return { prepared: { mask: own.mask, execute } };
}

type PrepareResult = Awaited<ReturnType<Executor['prepare']>>;

async function executeTest(
  attempt: SandboxedAttempt,
  playwright: PlaywrightRuntime | undefined,
  runMember: (runId: string, batchId: string) => Promise<unknown>,
  definition: Definition,
  request: { values: RequestValues; own: PlaywrightSecrets },
  read: StoredRead,
): Promise<RunOutcome> {
  const { run } = attempt;
  if (!playwright) return cannotRunOutcome('this worker was started without Playwright support');
  // A run of a suite run joins or leads a batch, and is then no longer on its way (batch/arrivals.ts);
  // any other is no longer on its way now.
  const batched = run.suiteRunId !== null && playwright.batching.maxRuns >= 2;
  if (!batched) playwright.arrivals.arrived(run.id);
  const ready = await readyAttempt(attempt, playwright, read, request.values, definition);
  // A run that cannot run (a secret that does not open, a bundle that cannot be had) joins nothing.
  if (!('bundleDir' in ready)) {
    playwright.arrivals.arrived(run.id);
    return ready;
  }
  const given = { ...ready, runMember };
  return batched ? runInBatch(given, read.db) : runAlone(given);
}

/** The attempt with its stored secrets opened and its bundle extracted, or the run's outcome when it cannot be. */
async function readyAttempt(
  attempt: SandboxedAttempt,
  playwright: PlaywrightRuntime,
  read: StoredRead,
  values: RequestValues,
  definition: Definition,
): Promise<Omit<ReadyAttempt, 'runMember'> | RunOutcome> {
  const { run } = attempt;
  const opened = await withStoredSecrets(read, run, values);
  if ('outcome' in opened) return opened.outcome;
  const { secrets } = opened;
  attempt.maskGrew(secrets.mask);
  const bundleDir = playwright.sandbox.ok
    ? await extracted(playwright, run.workspaceId, definition.bundle)
    : cannotRunOutcome(`this worker cannot sandbox tenant code: ${playwright.sandbox.reason}`);
  if (typeof bundleDir !== 'string') return bundleDir;
  return { attempt, playwright, definition, secrets, bundleDir, db: read.db };
}

/** The bundle extracted on this worker, or the run's outcome when it cannot be. */
async function extracted(
  playwright: PlaywrightRuntime,
  workspaceId: string,
  bundle: string,
): Promise<string | RunOutcome> {
  try {
    return await playwright.bundles.ensure(workspaceId, bundle);
  } catch (error) {
    if (error instanceof BundleUnavailableError) return invalidDefinitionOutcome(error.message);
    throw error;
  }
}
