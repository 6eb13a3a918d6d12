// Playwright Test as an executor (docs/PLAYWRIGHT.md): the run's definition names one test of a
// bundle the team deployed; the test runs with the service's Playwright Test runner in a sandbox of
// its own (docs/SANDBOX.md), through the worker's egress proxy, and its result becomes the run's.
import { isPlaywrightDefinition, type EvidenceMode, type PlaywrightDefinition } from '@testrun/contracts';
import type { RunOutcome } from '@testrun/core/runs';
import { invalidDefinitionOutcome } from '../../run/run-outcomes';
import { withRecordingNotes } from '../../run/run-limits';
import type { Executor, ExecutorAttempt } from '../executor';
import { BundleUnavailableError } from './bundle-cache';
import type { PlaywrightRuntime } from './playwright-deps';
import { openPlaywrightSecrets, type PlaywrightSecrets } from './playwright-secrets';
import { outcomeOf, stepRows, storeAttachments } from './record-result';
import { runPlaywrightTests } from './run';
import { withScratch } from './scratch-run';
import type { PlaywrightEvidence } from './types';

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
    return { prepared: { mask: secrets.mask, execute: (attempt) => execute(attempt, definition, secrets) } };
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
): Promise<RunOutcome> {
  const { run, playwright } = attempt;
  if (!playwright) return cannotRun('this worker was started without Playwright support');
  if (!playwright.sandbox.ok) return cannotRun(`this worker cannot sandbox tenant code: ${playwright.sandbox.reason}`);
  let bundleDir: string;
  try {
    bundleDir = await playwright.bundles.ensure(run.workspaceId, definition.bundle);
  } catch (error) {
    if (error instanceof BundleUnavailableError) return invalidDefinitionOutcome(error.message);
    throw error;
  }
  return withScratch(attempt.scratchDir, `pw-${run.id}-${attempt.attempt}-`, (scratchDir) =>
    runInScratch(attempt, playwright, definition, secrets, { bundleDir, scratchDir }),
  );
}

/** The test run in its sandbox, its steps and attachments recorded, before the scratch directory goes. */
async function runInScratch(
  attempt: ExecutorAttempt,
  playwright: PlaywrightRuntime,
  definition: Definition,
  secrets: PlaywrightSecrets,
  dirs: { bundleDir: string; scratchDir: string },
): Promise<RunOutcome> {
  const { run } = attempt;
  const { bundleDir, scratchDir } = dirs;
  const startedAt = Date.now();
  let seenBlocked = 0;
  const takeBlocked = () => {
    const blocked = attempt.blocked ?? [];
    const next = blocked[seenBlocked];
    seenBlocked = blocked.length;
    return next ? `${next.host}:${next.port} (${next.detail})` : null;
  };
  const { egress } = playwright;
  const proxy = attempt.proxy;
  {
    const [result] = await runPlaywrightTests(
      {
        bundleDir,
        configFile: definition.config,
        scratchDir,
        tests: [{ file: definition.file, project: definition.project, titlePath: definition.titlePath }],
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
        // A run's own retries (per request or test) win: Playwright then retries nothing itself.
        ...(run.retries > 0 ? { retries: 0 } : {}),
        evidence: evidenceOf(run.evidence.trace),
        timeoutMs: run.timeoutMs,
        signal: attempt.signal,
        limits: playwright.limits,
        takeBlocked,
      },
      () => undefined,
    );
    if (!result) return cannotRun('the Playwright run reported no result for the test');
    attempt.writer.recordTreeSteps(stepRows(result, startedAt, secrets.mask));
    const notes = await storeAttachments(attempt.writer, result, scratchDir, attempt.limits.maxRecordingBytes);
    await attempt.writer.flush();
    return withRecordingNotes(outcomeOf(result, secrets.mask), notes);
  }
}

function cannotRun(reason: string): RunOutcome {
  return { status: 'error', code: 'internal_error', message: reason, resultSummary: `Error: ${reason}.` };
}
