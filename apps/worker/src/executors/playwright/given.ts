// What a Playwright run's attempt runs with, alone or in a batch: its sandbox's options, and how a
// test's result becomes the run's outcome (playwright-executor.ts, batch-run.ts).
import type { EvidenceMode, PlaywrightDefinition } from '@testrun/contracts';
import type { RunOutcome } from '@testrun/core/runs';
import type { ExecutorAttempt } from '../executor';
import type { BlockedRequest } from '../../network/egress-proxy';
import type { PlaywrightRuntime } from './playwright-deps';
import type { PlaywrightSecrets } from './playwright-secrets';
import { recordTries } from './record-tries';
import { runPlaywrightTests } from './run';
import { SCRATCH_PREFIX, scratchBytes, withScratch } from './scratch-run';
import type { PlaywrightEvidence, PlaywrightTestResult, RunPlaywrightOptions } from './types';

export type Definition = PlaywrightDefinition['playwright'];

/** A run's attempt with its test, its open secrets and its extracted bundle. */
export interface Given {
  attempt: ExecutorAttempt;
  playwright: PlaywrightRuntime;
  definition: Definition;
  secrets: PlaywrightSecrets;
  bundleDir: string;
}

/** The evidence policy as Playwright's trace, video and screenshot settings (one mode for the three). */
function evidenceOf(mode: EvidenceMode): PlaywrightEvidence {
  return mode === 'on' ? 'on' : mode === 'off' ? 'off' : 'retain-on-failure';
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
export function sandboxOptions(
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

/** The run's test alone in a sandbox of its own, its steps and attachments recorded before its scratch directory goes. */
export function runAlone(given: Given): Promise<RunOutcome> {
  const { attempt, playwright, definition, secrets } = given;
  return withScratch(
    attempt.scratchDir,
    SCRATCH_PREFIX.run,
    async (scratchDir) => {
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
    },
    scratchBytes(playwright),
  );
}

/** Records a test's tries (their steps and attachments) and returns the run's outcome from its result. */
export function recordResult(
  attempt: ExecutorAttempt,
  result: PlaywrightTestResult,
  at: { startedAt: number; scratchDir: string; secrets: PlaywrightSecrets },
): Promise<RunOutcome> {
  return recordTries(attempt, result, { startedAt: at.startedAt, scratchDir: at.scratchDir, mask: at.secrets.mask });
}

export function cannotRun(reason: string): RunOutcome {
  return { status: 'error', code: 'internal_error', message: reason, resultSummary: `Error: ${reason}.` };
}
