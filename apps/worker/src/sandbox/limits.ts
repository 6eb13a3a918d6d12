import { availableParallelism } from 'node:os';
import type { SandboxLimits } from './run-sandboxed';

const MiB = 1024 * 1024;

/**
 * The one definition of the limits of a sandbox holding a Playwright Test run (a discovery, or a
 * batch of tests run one after another, one page at a time, by one Playwright worker; a batch of
 * several workers gets `limitsForWorkers`): Node (the test runner and its Playwright worker, with
 * the team's code) and Debian's Chromium with its GPU, network and renderer processes.
 * executors/playwright/runner/sandboxed-cli.ts applies them to every Playwright sandbox (a caller
 * may override each); runner/sandbox-scratch.ts mounts `scratchBytes`. docs/SANDBOX.md ("Limits
 * for a Playwright run") gives the measurements behind them.
 */
export const DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS = {
  /**
   * Measured: one sandbox running a 20-test batch of a shop suite peaks at 385–460 MiB (the runner,
   * its worker, Chromium and one renderer, and what they wrote to the tmpfs mounts, which are its
   * memory too). 1.5 GiB leaves room for all three tmpfs quotas full (640 MiB, so a full disk is
   * reported as `disk`, not `memory`) and for a heavier application's renderer besides.
   */
  memoryBytes: 1536 * MiB,
  /** Processes and threads: a batch peaks at 127–132 (15 processes); a fork bomb stops here, at ~4× that. */
  pids: 512,
  /**
   * Every core the worker sees, as a cap (SANDBOX_CPU_CORES lowers it): concurrent sandboxes share
   * the cores by the scheduler's equal weights, so a sandbox spinning gets its share when the others
   * are busy, and while one is starting or waiting the others borrow its idle core (a cap of one
   * core each left that core idle; docs/BENCHMARKS.md has the A/B).
   */
  cpuQuota: availableParallelism(),
  /** Ten minutes: the bound when the caller has no budget of its own (a batch gives one per test). */
  wallMs: 10 * 60 * 1000,
  /**
   * stdout and stderr, the worker holding up to this much of each: the results go to a file under
   * /work and each test's console into its result, so what is left is the runner's and Chromium's
   * own messages (kilobytes) and programs a test starts with its stdio inherited.
   */
  outputBytes: 8 * MiB,
  /**
   * /tmp: only what tenant code writes there by name. Chromium's profile and its shared memory
   * (`--disable-dev-shm-usage`) go to TMPDIR, /work/tmp, in the scratch quota; a batch leaves /tmp empty.
   */
  tmpBytes: 64 * MiB,
  /** /dev/shm: Chromium does not use it (`--disable-dev-shm-usage`); as /tmp, for tenant code. */
  shmBytes: 64 * MiB,
  /**
   * The scratch tmpfs (`mountScratch`): the bundle copy, HOME, TMPDIR (Chromium's profile and shared
   * memory), the results file, and the traces, videos and screenshots of every test of a batch, kept
   * until the batch ends (a few MiB a failed test).
   */
  scratchBytes: 512 * MiB,
} as const satisfies Required<SandboxLimits>;

/**
 * The limits of a sandbox that runs `workers` Playwright workers at once (a batch holding as many of
 * the worker's slots): the memory and processes of as many sandboxes of one, the rest as one.
 */
export function limitsForWorkers(limits: Partial<SandboxLimits>, workers: number): Partial<SandboxLimits> {
  if (workers <= 1) return limits;
  const memoryBytes = limits.memoryBytes ?? DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS.memoryBytes;
  const pids = limits.pids ?? DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS.pids;
  return { ...limits, memoryBytes: memoryBytes * workers, pids: pids * workers };
}
