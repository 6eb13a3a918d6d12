// A run of a suite run in a batch (docs/PLAYWRIGHT.md, "Batches"): the run joins the batch of a
// leader this worker is gathering (gather.ts), or leads one: the runs that joined it (one
// Playwright worker each) and the suite run's queued runs it reserves (batch.ts; which ones is
// core's sharing rule, runs/batch-plan.ts) run in one sandbox, and each run's result is recorded
// as its test ends.
import type { Db } from '@testrun/core/db';
import { errorMessage } from '@testrun/core/logger';
import { batchWorkers, playwrightBatchWallMs, type RunOutcome } from '@testrun/core/runs';
import type { RunListener } from '../../../network/egress-proxy';
import { DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS, limitsForWorkers, shareFolder } from '../../../sandbox';
import { PlaywrightBatch, reserveMembers, type BatchMember, type JoinedRun } from './batch';
import { gatherKey, GATHER_BOUND_MS, GATHER_GRACE_MS, type Gathering } from './gather';
import {
  recordResult,
  runAlone,
  sandboxOptions,
  setupRecorder,
  type Definition,
  type ReadyAttempt,
} from '../ready-attempt';
import { deferred } from './deferred';
import { cannotRunOutcome } from '../../../run/run-outcomes';
import { makeControlDir } from '../runner/interrupt';
import type { PlaywrightSecrets } from '../playwright-secrets';
import type { SandboxedAttempt } from '../sandboxed-attempt';
import { runPlaywrightTests } from '../runner/invoke-tests';
import { SCRATCH_PREFIX, scratchBytes, withScratch } from '../runner/sandbox-scratch';

/**
 * Runs the attempt of a run of a suite run: in the batch of a leader gathering its suite run's runs
 * (its job keeps its slot for the batch: one Playwright worker more), or as the leader of one.
 */
export async function runInBatch(ready: ReadyAttempt, db: Db): Promise<RunOutcome> {
  const { attempt, playwright, definition } = ready;
  const { run } = attempt;
  const key = gatherKey(run, definition);
  // Resolved when the run's own result has been recorded.
  const own = deferred<undefined>();
  const joining = playwright.gatherings.join(key, { runId: run.id, definition, recorded: own.promise });
  playwright.arrivals.arrived(run.id);
  if (!joining) return lead(ready, db, key);
  try {
    const gathered = await joining;
    const member = gathered && playwright.batches.take(run.id);
    if (gathered && member) {
      attempt.holdJob(gathered.work);
      return await recordMember(attempt, member.member, gathered.batch, ready.secrets);
    }
  } finally {
    own.resolve(undefined);
  }
  return runAlone(ready);
}

/**
 * Leads a batch: waits for the runs this worker took with it to join, reserves its share of the
 * suite run's queued runs, and runs them all in one sandbox with a Playwright worker per slot held.
 */
async function lead(ready: ReadyAttempt, db: Db, key: string): Promise<RunOutcome> {
  const { attempt, playwright } = ready;
  const gathering = playwright.gatherings.lead(key);
  try {
    const enough = () => gathering.joined.length + 1 >= playwright.batching.share;
    // While its suite run has runs queued, an idle slot of this worker is about to take one of them.
    const graceMs = (attempt.run.suiteQueued ?? 0) > 0 ? GATHER_GRACE_MS : 0;
    await playwright.arrivals.settled(GATHER_BOUND_MS, enough, graceMs);
  } finally {
    gathering.close();
  }
  let reserved: Awaited<ReturnType<typeof reserveMembers>>;
  try {
    const joined = gathering.joined.map((r) => r.runId);
    reserved = await reserveMembers(db, attempt.run.id, { ...playwright.batching, joined });
  } catch (error) {
    gathering.resolve(null);
    throw error;
  }
  if (!reserved) {
    gathering.resolve(null);
    return runAlone(ready);
  }
  return leadBatch(ready, db, reserved, gathering);
}

/**
 * A member's attempt: waits for its test's result in the batch's sandbox (or its cancel), then
 * records it, masked with its own values and the batch's (the sandbox holds its leader's).
 */
export async function recordMember(
  attempt: SandboxedAttempt,
  member: BatchMember,
  batch: PlaywrightBatch,
  own: PlaywrightSecrets,
): Promise<RunOutcome> {
  const secrets = { ...own, mask: own.mask.merged(batch.mask) };
  attempt.maskGrew(secrets.mask);
  const cancelled = new Promise<null>((resolve) => {
    if (attempt.signal.aborted) resolve(null);
    attempt.signal.addEventListener('abort', () => resolve(null), { once: true });
  });
  const result = await Promise.race([member.result, cancelled]);
  if (attempt.signal.aborted) {
    // Its test stops in the sandbox too; the batch's other tests carry on.
    await batch.interrupt(member.runId);
    return cannotRunOutcome('cancelled');
  }
  if (!result) return cannotRunOutcome('the Playwright batch ended without a result for the test');
  return recordResult(attempt, result, { startedAt: member.beganAt, scratchDir: batch.scratchDir, secrets });
}

/**
 * Leads a batch: its tests run in one sandbox, with a Playwright worker for the leader and each run
 * that joined it, kept by their jobs until every member has ended; each run's own result is
 * recorded as its test ends, like any member's.
 */
async function leadBatch(
  ready: ReadyAttempt,
  db: Db,
  reserved: { batchId: string; members: Map<string, Definition> },
  gathering: Gathering,
): Promise<RunOutcome> {
  const { attempt, playwright, definition } = ready;
  const { run } = attempt;
  const own = deferred<undefined>();
  const running: JoinedRun[] = [{ runId: run.id, definition, recorded: own.promise }, ...gathering.joined];
  const workers = batchWorkers(running.length, definition.workers);
  let batch: PlaywrightBatch;
  let work: Promise<unknown>;
  try {
    const egress = await playwright.egress?.open(`batch-${reserved.batchId}`, attempt.policy);
    batch = new PlaywrightBatch(
      reserved.batchId,
      { db, logger: attempt.logger, running, runBatched: ready.runMember, egress, mask: ready.secrets.mask },
      reserved.members,
    );
    playwright.batches.add(batch);
    attempt.logger.info('Playwright batch started', {
      runId: run.id,
      batchId: batch.id,
      runs: batch.runIds().length,
      workers,
    });
    work = runBatch(ready, batch, egress, workers).finally(() => playwright.batches.remove(batch));
  } catch (error) {
    gathering.resolve(null);
    own.resolve(undefined);
    throw error;
  }
  gathering.resolve({ batch, work });
  attempt.holdJob(
    work.catch((error: unknown) =>
      attempt.logger.error('Playwright batch failed', { batchId: batch.id, error: errorMessage(error) }),
    ),
  );
  const taken = playwright.batches.take(run.id);
  try {
    return taken
      ? await recordMember(attempt, taken.member, batch, ready.secrets)
      : cannotRunOutcome('the batch lost its leader');
  } finally {
    own.resolve(undefined);
  }
}

/**
 * Where a batch's start goes (docs/BENCHMARKS.md, "Start-up"), in ms from its sandbox's preparation:
 * the sandbox started, its runner's tests listed, its first test begun; logged once, at the last.
 */
function startTimes(logger: SandboxedAttempt['logger'], batchId: string) {
  const began = Date.now();
  const at: Partial<Record<'sandboxMs' | 'listedMs', number>> = {};
  let logged = false;
  return {
    stage: (stage: 'sandbox' | 'listed') => {
      at[`${stage}Ms`] ??= Date.now() - began;
    },
    begun: () => {
      if (logged) return;
      logged = true;
      logger.info('Playwright batch began its first test', { batchId, ...at, firstTestMs: Date.now() - began });
    },
  };
}

/** The batch's sandbox: its tests with `workers` Playwright workers, then the batch ended (its unrun runs freed). */
function runBatch(ready: ReadyAttempt, batch: PlaywrightBatch, egress: RunListener | undefined, workers: number) {
  const { attempt, playwright } = ready;
  const tests = batch.tests();
  const start = startTimes(attempt.logger, batch.id);
  return withScratch(
    attempt.scratchDir,
    SCRATCH_PREFIX.batch,
    async (scratchDir) => {
      batch.scratchDir = scratchDir;
      // In a sandbox, from the worker's share: its path on the host does not show inside.
      const parent = playwright.isolation === 'sandbox' ? await shareFolder('control', 0o755) : attempt.scratchDir;
      const control = await makeControlDir(parent);
      batch.controlDir = control.dir;
      const options = sandboxOptions(ready, egress);
      // A safety net far behind Playwright's own timeouts: it grows with the batch's tests, at least a run's.
      const wallMs = playwrightBatchWallMs(tests.length, DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS.wallMs);
      const setups = setupRecorder(ready, scratchDir);
      try {
        await runPlaywrightTests(
          {
            ...options,
            scratchDir,
            tests,
            baselines: await playwright.visual.baselinesFor(attempt.run.id),
            workers,
            signal: batch.abort.signal,
            controlDir: control.dir,
            limits: { ...limitsForWorkers(playwright.limits, workers), wallMs },
            onStage: start.stage,
            onBegin: (key) => {
              start.begun();
              batch.began(key);
            },
            onSetup: setups.record,
          },
          (result) => batch.ended(result),
        );
      } finally {
        await setups.settled();
        await control.remove();
        const freed = await batch.end();
        if (freed.length > 0)
          attempt.logger.warn('Playwright batch ended with runs it did not run; freed', { batchId: batch.id, freed });
      }
    },
    scratchBytes(playwright, workers),
  );
}
