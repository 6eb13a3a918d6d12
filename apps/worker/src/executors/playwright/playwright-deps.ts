import type { SandboxLimits } from '../../sandbox';
import type { BundleCache } from './bundle-cache';

/**
 * What a worker gives Playwright runs and discovery (service/playwright-tasks.ts): its bundles, the
 * way out of the sandbox, and whether it can sandbox at all.
 */
export interface PlaywrightRuntime {
  bundles: BundleCache;
  /**
   * The sandbox as checked at start-up: ok, or why this worker cannot sandbox (its Playwright runs
   * end `error` saying so, unless the operator opted out of the sandbox).
   */
  sandbox: { ok: true } | { ok: false; reason: string };
  /** The egress proxy's Unix socket and port: the relay in each sandbox dials it. Null: no network at all. */
  egress: { socketPath: string; port: number } | null;
  /** Bounds of each sandbox (a run's wall clock comes from its time budget). */
  limits: Partial<SandboxLimits>;
}
