import type { SandboxLimits } from './run-sandboxed';

const MiB = 1024 * 1024;

/**
 * The limits of a sandbox holding one Playwright Test run: Node (the test runner and the team's
 * code) and Debian's Chromium with its renderer, GPU and network helper processes. docs/SANDBOX.md
 * ("Limits for a Playwright run") gives the reasoning. `wallMs` is a ceiling: the caller gives the
 * test's own budget (its timeout × attempts, plus the browser's start) when it knows it.
 */
export const DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS = {
  /** Node with the runner (~150 MiB) + Chromium's browser, GPU, network and one renderer (~500-900 MiB), /tmp and /dev/shm. */
  memoryBytes: 1536 * MiB,
  /** Chromium alone starts ~25 processes of ~20 threads each; Node ~12 threads, workers and helpers more. */
  pids: 512,
  /** One core: a worker runs several sandboxes (WORKER_CONCURRENCY), each a run at a time. */
  cpuQuota: 1,
  /** Ten minutes: the bound when the caller has no budget of its own. */
  wallMs: 10 * 60 * 1000,
  /** The reporter writes results to a file under /work; stdout and stderr are the test's console. */
  outputBytes: 16 * MiB,
  /** Chromium's profile and Playwright's temporary files (and shared memory with --disable-dev-shm-usage). */
  tmpBytes: 256 * MiB,
  /** Chromium's shared memory when it uses /dev/shm. */
  shmBytes: 256 * MiB,
  /** The bundle copy, storage state, traces, videos and screenshots (`mountScratch`). */
  scratchBytes: 512 * MiB,
} as const satisfies Required<SandboxLimits>;
