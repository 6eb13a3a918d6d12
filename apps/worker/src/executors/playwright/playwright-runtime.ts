import type { TargetPolicy } from '@testrun/core/target-policy';
import type { RunListener } from '../../network/egress-proxy';
import type { SandboxLimits } from '../../sandbox';
import type { Arrivals } from './batch/arrivals';
import type { BatchRegistry } from './batch/batch';
import type { Gatherings } from './batch/gather';
import type { BundleCache } from './caches/bundle-cache';
import type { CodeCache } from './caches/code-cache';
import type { Isolation } from './runner/sandboxed-cli';
import type { PlaywrightVersions } from './runner/versions';
import type { VisualStore } from './store-visual';

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
  /** The @playwright/test versions a bundle may run on: the service's and those installed beside it (runner/versions.ts). */
  versions: PlaywrightVersions;
  /** The V8 code cache of the service's Playwright modules each sandbox reads (caches/code-cache.ts). */
  codeCache?: CodeCache;
  /** 'none' when the operator opted out of the sandbox (PLAYWRIGHT_SANDBOX=off): tenant code runs unsandboxed. */
  isolation: Isolation;
  /**
   * The way out of each sandbox: the port its relay listens on (Chromium's proxy there), and `open`,
   * which gives a sandbox a listener of the egress proxy of its own (a Unix socket the relay dials,
   * or a port of loopback without a sandbox) under a name and a policy. Null: no network at all.
   */
  egress: { port: number; open: (id: string, policy: TargetPolicy | undefined) => Promise<RunListener> } | null;
  /** Bounds of each sandbox (a run's wall clock comes from its time budget). */
  limits: Partial<SandboxLimits>;
  /** This worker's batches, by member run (batch/batch.ts). */
  batches: BatchRegistry;
  /**
   * How a suite run's tests are shared into batches: between `share` batches (the worker's
   * concurrency), at most `maxRuns` runs each (PLAYWRIGHT_BATCH_SIZE; 1: every test alone).
   */
  batching: { share: number; maxRuns: number };
  /** The runs this worker's jobs are bringing to their executor, which a batch's leader waits for (batch/arrivals.ts). */
  arrivals: Arrivals;
  /** The batches being gathered, which runs of the same suite run join (batch/gather.ts). */
  gatherings: Gatherings;
  /** The baselines of the runs' snapshots, and what the snapshots found (docs/VISUAL.md). */
  visual: VisualStore;
}
