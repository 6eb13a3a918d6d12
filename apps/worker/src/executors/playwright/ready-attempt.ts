// A Playwright run's attempt once it is ready to run (ReadyAttempt: its secrets opened, its bundle
// extracted), alone or in a batch: its sandbox's options, its test run alone, and how a test's
// result becomes the run's outcome (playwright-executor.ts, batch/run-in-batch.ts).
import type { EvidenceMode, PlaywrightDefinition } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import type { RunOutcome } from '@testrun/core/runs';
import type { BlockedRequest, RunListener } from '../../network/egress-proxy';
import type { PlaywrightRuntime } from './playwright-runtime';
import type { PlaywrightSecrets } from './playwright-secrets';
import type { SandboxedAttempt } from './sandboxed-attempt';
import { cannotRunOutcome } from '../../run/run-outcomes';
import { SetupRecorder } from './record-setup';
import { recordTries } from './record-tries';
import { runPlaywrightTests } from './runner/invoke-tests';
import { SCRATCH_PREFIX, scratchBytes, withScratch } from './runner/sandbox-scratch';
import type { PlaywrightEvidence, PlaywrightTestResult, RefusedRequest, RunPlaywrightOptions } from './runner/types';

export type Definition = PlaywrightDefinition['playwright'];

/**
 * A run's attempt ready to run: the attempt with the worker's Playwright runtime, its test, its
 * open secrets and its extracted bundle (what the executor hands on to runAlone or runInBatch).
 */
export interface ReadyAttempt {
  attempt: SandboxedAttempt;
  playwright: PlaywrightRuntime;
  /** Starts the lifecycle of a member of a batch this attempt leads (PlaywrightExecutorDeps.runMember). */
  runMember: (runId: string, batchId: string) => Promise<unknown>;
  definition: Definition;
  secrets: PlaywrightSecrets;
  bundleDir: string;
  db: Db;
}

/**
 * Records the setup tests a sandbox of the run's (alone or leading a batch) runs, for its suite run
 * (else for the run), their evidence read from the sandbox's `scratchDir`.
 */
export function setupRecorder(ready: ReadyAttempt, scratchDir: string): SetupRecorder {
  const { run, logger, writer, limits } = ready.attempt;
  const { rootDir } = ready.definition;
  const owner = {
    workspaceId: run.workspaceId,
    suiteRunId: run.suiteRunId,
    runId: run.id,
    ...(rootDir ? { rootDir } : {}),
  };
  return new SetupRecorder(ready.db, owner, ready.secrets.mask, logger, { scratchDir, writer, limits });
}

/** The evidence policy as Playwright's trace, video and screenshot settings (one mode for the three). */
function evidenceOf(mode: EvidenceMode): PlaywrightEvidence {
  return mode === 'on' ? 'on' : mode === 'off' ? 'off' : 'retain-on-failure';
}

/**
 * Reads an egress's refusals one test at a time: those not yet taken, in order, asked for by
 * `until` when given (the test's end as its runner saw it: a refusal the next test's page or code
 * asked for before the worker read that end is left for the next test).
 */
export function refusals(
  egress: Pick<RunListener, 'blocked'> | undefined,
): (until?: number) => readonly RefusedRequest[] {
  const taken = new Set<BlockedRequest>();
  return (until = Infinity) => {
    const next = (egress?.blocked ?? []).filter((b) => !taken.has(b) && b.askedAt <= until);
    for (const b of next) taken.add(b);
    return next.map(({ host, port, detail, askedAt }) => ({ host, port, detail, askedAt }));
  };
}

/**
 * Runs `work` with a way out of its own through the egress proxy (none when the worker gives its
 * sandboxes no network), named `id`, closed when `work` ends.
 */
async function withEgress<T>(
  ready: ReadyAttempt,
  id: string,
  work: (egress: RunListener | undefined) => Promise<T>,
): Promise<T> {
  const egress = await ready.playwright.egress?.open(id, ready.attempt.policy);
  try {
    return await work(egress);
  } finally {
    egress?.close();
  }
}

/**
 * What a sandbox of the run's tests is given, whoever's tests they are. Its browser reaches the
 * network through `egress`, a listener of the proxy that is the sandbox's own (no credentials: with
 * them, Playwright would intercept every request and turn the HTTP cache off).
 */
export function sandboxOptions(
  ready: ReadyAttempt,
  egress: RunListener | undefined,
): Omit<RunPlaywrightOptions, 'tests' | 'scratchDir'> {
  const { attempt, playwright, definition, secrets, bundleDir } = ready;
  const { run } = attempt;
  const port = playwright.egress?.port;
  // In a sandbox the relay on its loopback carries the browser's connections to the socket.
  const server = egress?.socketPath !== undefined ? `http://127.0.0.1:${port}` : egress?.url;
  return {
    bundleDir,
    transformCache: playwright.bundles.transformDir(bundleDir),
    codeCache: playwright.codeCache?.use(),
    versions: playwright.versions,
    configFile: definition.config,
    network:
      egress?.socketPath !== undefined && port !== undefined ? { proxySocketPath: egress.socketPath, port } : 'none',
    ...(server !== undefined ? { proxy: { server, bypass: '<-loopback>' } } : {}),
    env: secrets.env,
    baseUrl: run.baseUrl,
    headers: secrets.headers,
    // A run's own retries (per request or test) win, and so does a request's `retries: 0`:
    // Playwright then retries nothing itself.
    ...(run.retries > 0 || run.retriesRequested ? { retries: 0 } : {}),
    evidence: evidenceOf(run.evidence.trace),
    ...(definition.missingBaselines === 'fail' ? { missingBaselines: 'fail' } : {}),
    limits: playwright.limits,
    isolation: playwright.isolation,
    takeBlocked: refusals(egress),
  };
}

/** The run's test alone in a sandbox of its own, its steps and attachments recorded before its scratch directory goes. */
export function runAlone(ready: ReadyAttempt): Promise<RunOutcome> {
  const { attempt, playwright, definition, secrets } = ready;
  return withScratch(
    attempt.scratchDir,
    SCRATCH_PREFIX.run,
    async (scratchDir) => {
      // Its steps' times count from the test's start, not the sandbox's (which is a second or more earlier).
      let startedAt = Date.now();
      const onBegin = () => {
        startedAt = Date.now();
      };
      const tests = [{ file: definition.file, project: definition.project, titlePath: definition.titlePath }];
      const setups = setupRecorder(ready, scratchDir);
      const baselines = await playwright.visual.baselinesFor(attempt.run.id);
      const [result] = await withEgress(ready, `sandbox-${attempt.run.id}.${attempt.attempt}`, (egress) =>
        runPlaywrightTests(
          {
            ...sandboxOptions(ready, egress),
            scratchDir,
            tests,
            baselines,
            signal: attempt.signal,
            onBegin,
            onSetup: setups.record,
          },
          () => undefined,
        ),
      );
      await setups.settled();
      if (!result) return cannotRunOutcome('the Playwright run reported no result for the test');
      return recordResult(attempt, result, { startedAt, scratchDir, secrets });
    },
    scratchBytes(playwright),
  );
}

/** Records a test's tries (their steps and attachments) and returns the run's outcome from its result. */
export function recordResult(
  attempt: SandboxedAttempt,
  result: PlaywrightTestResult,
  at: { startedAt: number; scratchDir: string; secrets: PlaywrightSecrets },
): Promise<RunOutcome> {
  return recordTries(attempt, result, { startedAt: at.startedAt, scratchDir: at.scratchDir, mask: at.secrets.mask });
}
