/**
 * Peak memory of a worker's sandboxes, read from their cgroup v1 memory groups
 * (`/sys/fs/cgroup/memory/testrun-sandbox/sbx-<worker pid>-<id>/memory.max_usage_in_bytes`, what the
 * worker's own `peakMemoryBytes` reads). The groups go when their sandbox ends, so they are sampled
 * while the run lasts: a sandbox's last growth within one interval of its end can be missed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = '/sys/fs/cgroup/memory/testrun-sandbox';
const INTERVAL_MS = 200;

/** The memory groups of worker `workerPid`'s live sandboxes. */
function sandboxGroups(workerPid: number): string[] {
  try {
    return readdirSync(ROOT).filter((name) => name.startsWith(`sbx-${workerPid}-`));
  } catch {
    return [];
  }
}

/**
 * Waits until worker `workerPid` has no sandbox left (a batch's sandbox outlives its last test's
 * result while its runner and browsers shut down), at most `boundMs`; whether it has none.
 */
export async function sandboxesGone(workerPid: number, boundMs = 60_000): Promise<boolean> {
  const until = Date.now() + boundMs;
  while (sandboxGroups(workerPid).length > 0) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** Samples the sandboxes of worker `workerPid` until `stop`; their peaks in bytes, one per sandbox seen. */
export function sampleSandboxMemory(workerPid: number): { stop: () => number[] } {
  const peaks = new Map<string, number>();
  const sample = () => {
    for (const name of sandboxGroups(workerPid)) {
      try {
        const bytes = Number(readFileSync(path.join(ROOT, name, 'memory.max_usage_in_bytes'), 'utf8'));
        if (Number.isFinite(bytes)) peaks.set(name, Math.max(peaks.get(name) ?? 0, bytes));
      } catch {
        // The sandbox ended between the listing and the read.
      }
    }
  };
  const timer = setInterval(sample, INTERVAL_MS);
  sample();
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return [...peaks.values()];
    },
  };
}
