// Playwright Test as an executor (docs/PLAYWRIGHT.md): the run's definition names one test of a
// bundle the team deployed; the test runs with the service's Playwright Test runner in a sandbox of
// its own (docs/SANDBOX.md), through the worker's egress proxy, and its result becomes the run's.
// The first attempt of a run of a suite run leads a batch (batch.ts) of the suite run's other
// queued runs of the bundle, or is a member of one: the tests then share one sandbox.
import { isPlaywrightDefinition, type EvidenceMode, type PlaywrightDefinition } from '@testrun/contracts';
import type { RunOutcome } from '@testrun/core/runs';
import { invalidDefinitionOutcome } from '../../run/run-outcomes';
import type { Executor, ExecutorAttempt } from '../executor';
import type { Db } from '@testrun/core/db';
import { errorMessage } from '@testrun/core/logger';
import { DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS } from '../../sandbox';
import { PlaywrightBatch, reserveMembers, type BatchMember } from './batch';
import { BundleUnavailableError } from './bundle-cache';
import { makeControlDir } from './interrupt';
import type { PlaywrightRuntime } from './playwright-deps';
import { openPlaywrightSecrets, type PlaywrightSecrets } from './playwright-secrets';
import { recordTries } from './record-tries';
import { runPlaywrightTests } from './run';
import type { BlockedRequest, RunEgress } from '../../network/egress-proxy';
import { scratchBytes, withScratch } from './scratch-run';
import type { PlaywrightEvidence, PlaywrightTestResult, RunPlaywrightOptions } from './types';

type Definition = PlaywrightDefinition['playwright'];

/** Runs a Playwright test's run: opens its secrets, then runs the test in a sandbox. */
export const playwrightExecutor: Executor = {
  async prepare({ run, db, headersKey, retry }) {
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
    const opened = await openPlaywrightSecrets(db, headersKey, run, retry);
    if ('outcome' in opened) return opened;
    const { secrets } = opened;
    return { prepared: { mask: secrets.mask, execute: (attempt) => execute(attempt, definition, secrets, db) } };
  },
};

/** The evidence policy as Playwright's trace, video and screenshot settings (one mode for the three). */
function evidenceOf(mode: EvidenceMode): PlaywrightEvidence {
  return mode === 'on' ? 'on' : mode === 'off' ? 'off' : 'retain-on-failure';
}

async function execute(
  attempt: ExecutorAttempt,
  definition: Definition,
  secrets: PlaywrightSecrets,
  db: Db,
): Promise<RunOutcome> {
  const { run, playwright } = attempt;
  if (!playwright) return cannotRun('this worker was started without Playwright support');
  if (!playwright.sandbox.ok) return cannotRun(`this worker cannot sandbox tenant code: ${playwright.sandbox.reason}`);
  const joined = playwright.batches.take(run.id);
  if (joined) return recordMember(attempt, joined.member, joined.batch, secrets);
  let bundleDir: string;
  try {
    bundleDir = await playwright.bundles.ensure(run.workspaceId, definition.bundle);
  } catch (error) {
    if (error instanceof BundleUnavailableError) return invalidDefinitionOutcome(error.message);
    throw error;
  }
  const given = { attempt, playwright, definition, secrets, bundleDir };
  if (run.suiteRunId !== null) {
    const reserved = await reserveMembers(db, run.id, playwright.batching);
    if (reserved) return leadBatch(given, db, reserved);
  }
  return withScratch(
    attempt.scratchDir,
    `pw-${run.id}-${attempt.attempt}-`,
    (scratchDir) => runAlone(given, scratchDir),
    scratchBytes(playwright),
  );
}

interface Given {
  attempt: ExecutorAttempt;
  playwright: PlaywrightRuntime;
  definition: Definition;
  secrets: PlaywrightSecrets;
  bundleDir: string;
}

/** Reads an egress's refusals one test at a time: the first since the previous call, or null. */
function refusals(blocked: () => readonly BlockedRequest[] | undefined) {
  let seen = 0;
  return () => {
    const list = blocked() ?? [];
    const next = list[seen];
    seen = list.length;
    return next ? `${next.host}:${next.port} (${next.detail})` : null;
  };
}

/** What a sandbox of the run's tests is given, whoever's tests they are. */
function sandboxOptions(
  given: Given,
  proxy: ExecutorAttempt['proxy'],
  blocked: () => readonly BlockedRequest[] | undefined,
): Omit<RunPlaywrightOptions, 'tests' | 'scratchDir'> {
  const { attempt, playwright, definition, secrets, bundleDir } = given;
  const { run } = attempt;
  const { egress } = playwright;
  return {
    bundleDir,
    transformCache: playwright.bundles.transformDir(bundleDir),
    configFile: definition.config,
    network: egress ? { proxySocketPath: egress.socketPath, port: egress.port } : 'none',
    ...(egress && proxy
      ? {
          proxy: {
            server: `http://127.0.0.1:${egress.port}`,
            username: proxy.username ?? '',
            password: proxy.password ?? '',
            bypass: '<-loopback>',
          },
        }
      : {}),
    env: secrets.env,
    baseUrl: run.baseUrl,
    headers: secrets.headers,
    // A run's own retries (per request or test) win, and so does a request's `retries: 0`:
    // Playwright then retries nothing itself.
    ...(run.retries > 0 || run.retriesRequested ? { retries: 0 } : {}),
    evidence: evidenceOf(run.evidence.trace),
    timeoutMs: run.timeoutMs,
    limits: playwright.limits,
    isolation: playwright.isolation,
    takeBlocked: refusals(blocked),
  };
}

/** The run's test alone in its sandbox, its steps and attachments recorded, before the scratch directory goes. */
async function runAlone(given: Given, scratchDir: string): Promise<RunOutcome> {
  const { attempt, definition, secrets } = given;
  const startedAt = Date.now();
  const [result] = await runPlaywrightTests(
    {
      ...sandboxOptions(given, attempt.proxy, () => attempt.blocked),
      scratchDir,
      tests: [{ file: definition.file, project: definition.project, titlePath: definition.titlePath }],
      signal: attempt.signal,
    },
    () => undefined,
  );
  if (!result) return cannotRun('the Playwright run reported no result for the test');
  return recordResult(attempt, result, { startedAt, scratchDir, secrets });
}

/** Records a test's tries (their steps and attachments) and returns the run's outcome from its result. */
function recordResult(
  attempt: ExecutorAttempt,
  result: PlaywrightTestResult,
  at: { startedAt: number; scratchDir: string; secrets: PlaywrightSecrets },
): Promise<RunOutcome> {
  return recordTries(attempt, result, { startedAt: at.startedAt, scratchDir: at.scratchDir, mask: at.secrets.mask });
}

/** A member's attempt: waits for its test's result in the batch's sandbox (or its cancel), then records it. */
async function recordMember(
  attempt: ExecutorAttempt,
  member: BatchMember,
  batch: PlaywrightBatch,
  secrets: PlaywrightSecrets,
): Promise<RunOutcome> {
  const cancelled = new Promise<null>((resolve) => {
    if (attempt.signal.aborted) resolve(null);
    attempt.signal.addEventListener('abort', () => resolve(null), { once: true });
  });
  const result = await Promise.race([member.result, cancelled]);
  if (attempt.signal.aborted) {
    // Its test stops in the sandbox too; the batch's other tests carry on.
    await batch.interrupt(member.runId);
    return cannotRun('cancelled');
  }
  if (!result) return cannotRun('the Playwright batch ended without a result for the test');
  return recordResult(attempt, result, { startedAt: member.beganAt, scratchDir: batch.scratchDir, secrets });
}

/**
 * Leads a batch: its tests run in one sandbox, kept by this run's job until every member has ended;
 * this run's own result is recorded as its test ends, like any member's.
 */
async function leadBatch(
  given: Given,
  db: Db,
  reserved: { batchId: string; members: Map<string, Definition> },
): Promise<RunOutcome> {
  const { attempt, playwright, definition } = given;
  const { run } = attempt;
  let leaderDone: () => void = () => undefined;
  const recorded = new Promise<void>((resolve) => {
    leaderDone = resolve;
  });
  const egress: RunEgress | undefined = playwright.openEgress?.(`batch-${reserved.batchId}`, attempt.policy);
  const batch = new PlaywrightBatch(
    reserved.batchId,
    {
      db,
      logger: attempt.logger,
      leader: { runId: run.id, definition, recorded },
      runBatched: attempt.runBatched,
      egress,
    },
    reserved.members,
  );
  playwright.batches.add(batch);
  attempt.logger.info('Playwright batch started', { runId: run.id, batchId: batch.id, runs: batch.runIds().length });
  const tests = batch.tests();
  const work = withScratch(
    attempt.scratchDir,
    `pw-batch-${run.id}-`,
    async (scratchDir) => {
      batch.scratchDir = scratchDir;
      const control = await makeControlDir(attempt.scratchDir);
      batch.controlDir = control.dir;
      const options = sandboxOptions(given, egress?.proxy ?? attempt.proxy, () => egress?.blocked ?? attempt.blocked);
      // A batch's wall clock grows with its tests: twice their time budgets, at least a run's.
      const single = DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS.wallMs;
      const wallMs = Math.min(4 * 3_600_000, Math.max(single, tests.length * run.timeoutMs * 2));
      try {
        await runPlaywrightTests(
          {
            ...options,
            scratchDir,
            tests,
            signal: batch.abort.signal,
            controlDir: control.dir,
            limits: { ...playwright.limits, wallMs },
            onBegin: (key) => batch.began(key),
          },
          (result) => batch.ended(result),
        );
      } finally {
        await control.remove();
        const freed = await batch.end();
        if (freed.length > 0)
          attempt.logger.warn('Playwright batch ended with runs it did not run; freed', { batchId: batch.id, freed });
      }
    },
    scratchBytes(playwright),
  ).finally(() => playwright.batches.remove(batch));
  attempt.holdJob(
    work.catch((error: unknown) =>
      attempt.logger.error('Playwright batch failed', { batchId: batch.id, error: errorMessage(error) }),
    ),
  );
  const own = playwright.batches.take(run.id);
  try {
    return own ? await recordMember(attempt, own.member, batch, given.secrets) : cannotRun('the batch lost its leader');
  } finally {
    leaderDone();
  }
}

function cannotRun(reason: string): RunOutcome {
  return { status: 'error', code: 'internal_error', message: reason, resultSummary: `Error: ${reason}.` };
}
