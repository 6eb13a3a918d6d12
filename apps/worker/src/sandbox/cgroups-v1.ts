import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  CFS_PERIOD_US,
  checkId,
  cpuQuotaUs,
  killAndRemove,
  killIn,
  probeDriver,
  readKeyed,
  readNumber,
  sweepStale,
  type CgroupDetection,
  type CgroupDriver,
} from './cgroups';

/*
 * cgroup v1: one hierarchy per controller (memory, pids, cpu) under the root, each sandbox a group
 * `testrun-sandbox/<id>` in all three.
 */

/** The parent of every sandbox's group, under each controller's hierarchy. */
const PARENT = 'testrun-sandbox';
const CONTROLLERS = ['memory', 'pids', 'cpu'] as const;

function cgroupV1(root: string): CgroupDriver {
  return {
    version: 'v1',
    async create(id, limits) {
      checkId(id);
      for (const controller of CONTROLLERS) await mkdir(path.join(root, controller, PARENT), { recursive: true });
      const [memory, pids, cpu] = CONTROLLERS.map((controller) => path.join(root, controller, PARENT, id)) as [
        string,
        string,
        string,
      ];
      const dirs = [memory, pids, cpu];
      const made: string[] = [];
      try {
        for (const dir of dirs) {
          await mkdir(dir);
          made.push(dir);
        }
        await writeFile(path.join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
        // With swap accounting, swap counts too: otherwise the limit only moves memory to swap.
        const memsw = path.join(memory, 'memory.memsw.limit_in_bytes');
        if (existsSync(memsw)) await writeFile(memsw, String(limits.memoryBytes));
        await writeFile(path.join(pids, 'pids.max'), String(limits.pids));
        await writeFile(path.join(cpu, 'cpu.cfs_period_us'), String(CFS_PERIOD_US));
        await writeFile(path.join(cpu, 'cpu.cfs_quota_us'), String(cpuQuotaUs(limits.cpuQuota)));
      } catch (error) {
        await killAndRemove(made).catch(() => undefined);
        throw error;
      }
      return {
        procsFiles: dirs.map((dir) => path.join(dir, 'cgroup.procs')),
        limitHit() {
          const oom = readKeyed(path.join(memory, 'memory.oom_control'));
          if ((oom.get('oom_kill') ?? 0) > 0 || oom.get('under_oom') === 1) return 'memory';
          if ((readKeyed(path.join(pids, 'pids.events')).get('max') ?? 0) > 0) return 'pids';
          return null;
        },
        peakMemoryBytes: () => readNumber(path.join(memory, 'memory.max_usage_in_bytes')),
        killAll: () => killIn(dirs),
        destroy: () => killAndRemove(dirs),
      };
    },
  };
}

/** The v1 controllers the sandbox needs that are not mounted under `root`. */
function missingV1Controllers(root: string): string[] {
  return CONTROLLERS.filter((controller) => !existsSync(path.join(root, controller, 'cgroup.procs')));
}

/**
 * The v1 driver when memory, pids and cpu are mounted under `root` and this process can create and
 * remove a group in each (the groups of workers that are gone are removed first).
 */
export async function detectV1(root: string): Promise<CgroupDetection> {
  const missing = missingV1Controllers(root);
  if (missing.length > 0)
    return { reason: `the cgroup v1 controllers ${missing.join(', ')} are not mounted under ${root}` };
  for (const controller of CONTROLLERS) await sweepStale(path.join(root, controller, PARENT));
  return probeDriver(cgroupV1(root), root);
}
