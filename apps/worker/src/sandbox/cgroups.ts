import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/*
 * The sandbox's resource limits, as control groups. Only cgroup v1 is written today (this machine
 * mounts memory, pids and cpu as v1 hierarchies under /sys/fs/cgroup); a v2 driver is a second
 * implementation of `CgroupDriver` chosen by `detectCgroups`.
 */

/** What the cgroups bound. */
interface CgroupLimits {
  memoryBytes: number;
  pids: number;
  /** Fraction of one core (0.5 = half a core). */
  cpuQuota: number;
}

/** One sandbox's groups, from creation to removal. */
export interface SandboxCgroup {
  /** The files a process writes its pid to, to enter every group (before it runs tenant code). */
  readonly procsFiles: readonly string[];
  /** The limit the groups enforced, if one was reached: the memory OOM killer, or a fork refused. */
  limitHit(): 'memory' | 'pids' | null;
  /** The most memory the group used, when the controller reports it. */
  peakMemoryBytes(): number | undefined;
  /** SIGKILLs every process in the groups until none is left, then removes them. */
  destroy(): Promise<void>;
}

/** A cgroup version's way of making groups. */
export interface CgroupDriver {
  readonly version: 'v1' | 'v2';
  create(id: string, limits: CgroupLimits): Promise<SandboxCgroup>;
}

/** The parent of every sandbox's group, under each controller's hierarchy. */
const PARENT = 'testrun-sandbox';
const CFS_PERIOD_US = 100_000;

function readNumber(file: string): number | undefined {
  try {
    const value = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `key value` lines (memory.oom_control, pids.events) as a map. */
function readKeyed(file: string): Map<string, number> {
  const values = new Map<string, number>();
  try {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const [key, value] = line.trim().split(/\s+/);
      if (key && value !== undefined) values.set(key, Number(value));
    }
  } catch {
    // The group is gone or the file does not exist on this kernel: nothing to report.
  }
  return values;
}

async function pidsIn(dir: string): Promise<number[]> {
  try {
    const text = await readFile(path.join(dir, 'cgroup.procs'), 'utf8');
    return text
      .split('\n')
      .filter(Boolean)
      .map(Number)
      .filter((pid) => Number.isInteger(pid) && pid > 0);
  } catch {
    return [];
  }
}

/** Kills what is in `dirs` until they are empty (a fork bomb refills them for a moment) and removes them. */
async function killAndRemove(dirs: readonly string[]): Promise<void> {
  for (let round = 0; round < 200; round += 1) {
    let left = 0;
    for (const dir of dirs) {
      for (const pid of await pidsIn(dir)) {
        left += 1;
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }
    const removed = await Promise.all(
      dirs.map((dir) =>
        rmdir(dir).then(
          () => true,
          (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT',
        ),
      ),
    );
    if (removed.every(Boolean)) return;
    // EBUSY while the killed processes are reaped.
    await sleep(left > 0 ? 5 : 20);
  }
  throw new Error(`sandbox cgroups could not be removed: ${dirs.join(', ')}`);
}

/** Whether a process of that pid exists (a worker that made groups or mounts still runs). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the groups of workers that are gone (a worker killed with SIGKILL leaves its sandboxes'
 * empty groups behind; its sandboxes died with it). Group names start `sbx-<worker pid>-`; the
 * groups of a live worker on the same machine are left alone.
 */
async function sweepStale(root: string): Promise<void> {
  for (const controller of ['memory', 'pids', 'cpu']) {
    const parent = path.join(root, controller, PARENT);
    const names = await readdir(parent).catch(() => [] as string[]);
    for (const name of names) {
      const pid = /^sbx-(\d+)-/.exec(name)?.[1];
      if (pid === undefined || Number(pid) === process.pid || isAlive(Number(pid))) continue;
      await killAndRemove([path.join(parent, name)]).catch(() => undefined);
    }
  }
}

/** cgroup v1: one hierarchy per controller (memory, pids, cpu) under `root`. */
function cgroupV1(root = '/sys/fs/cgroup'): CgroupDriver {
  return {
    version: 'v1',
    async create(id, limits) {
      if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`invalid sandbox id ${id}`);
      for (const controller of ['memory', 'pids', 'cpu'])
        await mkdir(path.join(root, controller, PARENT), { recursive: true });
      const memory = path.join(root, 'memory', PARENT, id);
      const pids = path.join(root, 'pids', PARENT, id);
      const cpu = path.join(root, 'cpu', PARENT, id);
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
        const quota = Math.max(1000, Math.round(limits.cpuQuota * CFS_PERIOD_US));
        await writeFile(path.join(cpu, 'cpu.cfs_quota_us'), String(quota));
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
        destroy: () => killAndRemove(dirs),
      };
    },
  };
}

/**
 * The cgroup driver this machine allows, or why there is none. v1 needs the memory, pids and cpu
 * controllers mounted and a group this process can create and remove.
 */
export async function detectCgroups(root = '/sys/fs/cgroup'): Promise<{ driver: CgroupDriver } | { reason: string }> {
  const missing = ['memory', 'pids', 'cpu'].filter(
    (controller) => !existsSync(path.join(root, controller, 'cgroup.procs')),
  );
  if (missing.length > 0) {
    const v2 = existsSync(path.join(root, 'cgroup.controllers')) || existsSync(path.join(root, 'unified'));
    return {
      reason:
        `the cgroup v1 controllers ${missing.join(', ')} are not mounted under ${root}` +
        (v2 ? ' (cgroup v2 is present, and not supported yet)' : ''),
    };
  }
  const driver = cgroupV1(root);
  await sweepStale(root);
  try {
    const probe = await driver.create(`probe-${process.pid}-${Date.now()}`, {
      memoryBytes: 64 * 1024 * 1024,
      pids: 8,
      cpuQuota: 0.1,
    });
    await probe.destroy();
  } catch (error) {
    return { reason: `cannot create a cgroup under ${root} (${(error as Error).message})` };
  }
  return { driver };
}
