import { existsSync } from 'node:fs';
import { mkdir, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  CFS_PERIOD_US,
  checkId,
  cpuQuotaUs,
  killAndRemove,
  killEach,
  killIn,
  pidsIn,
  readKeyed,
  readNumber,
  type CgroupDriver,
  type GroupRemoval,
} from './cgroups';

/*
 * cgroup v2: one directory per sandbox under the worker's delegated cgroup (cgroups-v2-detect.ts
 * finds it, moves the worker into a leaf beside its sandboxes and enables memory, pids and cpu for
 * them), with every limit in it: memory.max (+ memory.swap.max 0), pids.max and cpu.max.
 */

/**
 * Making and removing a group. On the kernel's cgroup2 filesystem `mkdir` makes a group with its
 * interface files and `rmdir` removes an empty one (EBUSY while processes are in it); a test lays out
 * a plain directory and stands in for the kernel with its own.
 */
export interface CgroupFs {
  mkdir: (dir: string) => Promise<void>;
  rmdir: (dir: string) => Promise<void>;
}

export const KERNEL_FS: CgroupFs = {
  mkdir: async (dir) => {
    await mkdir(dir);
  },
  rmdir,
};

/** How often memory.current is read where the kernel has no memory.peak (before 5.19). */
const PEAK_SAMPLE_MS = 250;

/**
 * How a group of `base` is emptied and removed: `cgroup.kill` (Linux 5.14 and later) SIGKILLs every
 * process in it at once, forks in flight included; without it, each pid listed in cgroup.procs.
 */
export function removalOf(fs: CgroupFs, dir: string): GroupRemoval {
  if (!existsSync(path.join(dir, 'cgroup.kill'))) return { kill: killEach, remove: fs.rmdir };
  return {
    kill: async (group) => {
      // The group may be gone already (ENOENT): nothing left to kill.
      await writeFile(path.join(group, 'cgroup.kill'), '1').catch(() => undefined);
      return (await pidsIn(group)).length;
    },
    remove: fs.rmdir,
  };
}

/** Writes the limits into a new group. */
async function writeLimits(dir: string, limits: { memoryBytes: number; pids: number; cpuQuota: number }) {
  await writeFile(path.join(dir, 'memory.max'), String(limits.memoryBytes));
  // Swap is not extra memory for the sandbox: without this the limit only moves pages to swap.
  // The file is absent when the kernel accounts no swap.
  const swap = path.join(dir, 'memory.swap.max');
  if (existsSync(swap)) await writeFile(swap, '0');
  await writeFile(path.join(dir, 'pids.max'), String(limits.pids));
  await writeFile(path.join(dir, 'cpu.max'), `${cpuQuotaUs(limits.cpuQuota)} ${CFS_PERIOD_US}`);
}

/**
 * The most memory the group used: memory.peak where the kernel keeps it (5.19 and later), else the
 * highest memory.current seen, sampled while the group lives and at each reading.
 */
function peakReader(dir: string): { read: () => number | undefined; stop: () => void } {
  const peakFile = path.join(dir, 'memory.peak');
  if (existsSync(peakFile)) return { read: () => readNumber(peakFile), stop: () => undefined };
  const currentFile = path.join(dir, 'memory.current');
  let highest: number | undefined;
  const sample = () => {
    const current = readNumber(currentFile);
    if (current !== undefined) highest = Math.max(highest ?? 0, current);
    return highest;
  };
  const timer = setInterval(sample, PEAK_SAMPLE_MS);
  timer.unref();
  return { read: sample, stop: () => clearInterval(timer) };
}

/** The v2 driver: each sandbox's group is `<base>/<id>`, `base` being the worker's delegated cgroup. */
export function cgroupV2(base: string, fs: CgroupFs = KERNEL_FS): CgroupDriver {
  return {
    version: 'v2',
    async create(id, limits) {
      checkId(id);
      const dir = path.join(base, id);
      await fs.mkdir(dir);
      const removal = removalOf(fs, dir);
      try {
        await writeLimits(dir, limits);
      } catch (error) {
        await killAndRemove([dir], removal).catch(() => undefined);
        throw error;
      }
      const peak = peakReader(dir);
      return {
        procsFiles: [path.join(dir, 'cgroup.procs')],
        limitHit() {
          if ((readKeyed(path.join(dir, 'memory.events')).get('oom_kill') ?? 0) > 0) return 'memory';
          if ((readKeyed(path.join(dir, 'pids.events')).get('max') ?? 0) > 0) return 'pids';
          return null;
        },
        peakMemoryBytes: () => peak.read(),
        killAll: () => killIn([dir], removal),
        async destroy() {
          peak.stop();
          await killAndRemove([dir], removal);
        },
      };
    },
  };
}
