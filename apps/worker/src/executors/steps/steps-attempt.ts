// What the steps executor is made with (executors/index.ts) and what each of its attempts runs
// with: the lifecycle's attempt, and a browser context of its own opened through the egress.
import type { BrowserContext, BrowserContextOptions } from 'playwright';
import { recordsEvidence } from '@testrun/contracts';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { BlockedRequest } from '../../network/egress-proxy';
import type { EgressSource } from '../../network/run-target';
import type { ExecutorAttempt } from '../../run/executor';
import { DEFAULT_RUN_LIMITS, type RunLimits } from '../../run/run-limits';

/** Where browser contexts come from: the process's warm browser (see BrowserPool). */
export interface ContextSource {
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
}

/** What the steps executor is made with. */
export interface StepsExecutorDeps {
  browser: ContextSource;
  /**
   * A directory of the worker's own for traces and videos on their way to the artifact store
   * (made and removed by the worker service); files in it are named per run and attempt.
   */
  scratchDir: string;
  /** Record a video of each run (needs Playwright's ffmpeg). Default false. */
  recordVideo?: boolean;
  /**
   * The worker's egress proxy: each attempt's context goes out through it with credentials of its
   * own, and a request the policy refuses ends the run `target_blocked`. Default none (no proxy).
   */
  egress?: EgressSource;
  /** What each run's pages and recordings may use. Default {@link DEFAULT_RUN_LIMITS}. */
  limits?: RunLimits;
  /** Longest the teardown (trace, context close, video) may take before it is abandoned. Default 15000 ms. */
  teardownTimeoutMs?: number;
  /** Told when a cancelled run's browser context has been closed (benchmarks). Default nobody. */
  onContextCancelled?: (runId: string) => void;
  /**
   * The artifact store, where `expectScreenshot` steps' baselines are kept (docs/VISUAL.md, "Step
   * tests"). Default none: such a step ends `error`/`internal_error`.
   */
  store?: ArtifactStore;
}

/** A steps attempt: the lifecycle's, with the browser context, limits and recordings of the executor's. */
export interface StepsAttempt extends ExecutorAttempt {
  /** What the egress proxy refused for this attempt so far (grows as it refuses; none without a proxy). */
  readonly blocked: readonly BlockedRequest[] | undefined;
  /**
   * Opens the attempt's browser context through the attempt's egress, with downloads off and the
   * video the run's evidence policy asks for; the caller closes it.
   */
  readonly openContext: (options: BrowserContextOptions) => Promise<BrowserContext>;
  /** Told once a cancelled attempt's context has been closed. */
  readonly contextCancelled: () => void;
  readonly limits: RunLimits;
  readonly scratchDir: string;
  readonly teardownMs: number;
}

/**
 * Runs `work` with the attempt's way out: credentials of its own at the egress proxy under the
 * attempt's policy, closed when `work` ends.
 */
export async function withStepsAttempt<T>(
  deps: StepsExecutorDeps,
  attempt: ExecutorAttempt,
  work: (steps: StepsAttempt) => Promise<T>,
): Promise<T> {
  const { run } = attempt;
  const egress = deps.egress?.openRun(`${run.id}.${attempt.attempt}`, { policy: attempt.policy });
  const proxy = egress?.proxy;
  // No video unless the run's policy records one: without recordVideo no encoder is started.
  const video: BrowserContextOptions =
    deps.recordVideo && recordsEvidence(run.evidence.video)
      ? { recordVideo: { dir: deps.scratchDir, size: { width: 800, height: 450 } } }
      : {};
  try {
    return await work({
      ...attempt,
      blocked: egress?.blocked,
      // A page's downloads are never written to the worker's disk.
      openContext: (options) =>
        deps.browser.newContext({ ...options, ...(proxy ? { proxy } : {}), acceptDownloads: false, ...video }),
      contextCancelled: () => deps.onContextCancelled?.(run.id),
      limits: deps.limits ?? DEFAULT_RUN_LIMITS,
      scratchDir: deps.scratchDir,
      teardownMs: deps.teardownTimeoutMs ?? 15_000,
    });
  } finally {
    egress?.close();
  }
}
