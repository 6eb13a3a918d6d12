import { readFileSync } from 'node:fs';
import { readdir, readFile, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/*
 * The sandbox's resource limits, as control groups: what every cgroup driver gives the sandbox and
 * the file handling they share. cgroups-v1.ts writes the v1 hierarchies (one per controller),
 * cgroups-v2.ts the unified one; cgroups-detect.ts picks the one this machine has.
 */

/** What the cgroups bound. */
interface CgroupLimits {
  memoryBytes: number;
  pids: number;
  /** Cores, as a CFS quota (0.5 = half a core, 2 = two cores). */
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
  /**
   * SIGKILLs every process in the groups now, leaving the groups: what a stop does beside killing the
   * sandbox's first process, whose descendants may not all die with it (see run-sandboxed.ts).
   */
  killAll(): Promise<void>;
  /** SIGKILLs every process in the groups until none is left, then removes them. */
  destroy(): Promise<void>;
}

/** A cgroup version's way of making groups. */
export interface CgroupDriver {
  readonly version: 'v1' | 'v2';
  create(id: string, limits: CgroupLimits): Promise<SandboxCgroup>;
}

/** The driver this machine allows, or why there is none (for the start-up refusal). */
export type CgroupDetection = { driver: CgroupDriver } | { reason: string };

/**
 * The driver once it has made and removed a small probe group under `where`: the check at start-up
 * that the worker may create groups there. Otherwise why not.
 */
export async function probeDriver(driver: CgroupDriver, where: string): Promise<CgroupDetection> {
  try {
    const probe = await driver.create(`probe-${process.pid}-${Date.now()}`, {
      memoryBytes: 64 * 1024 * 1024,
      pids: 8,
      cpuQuota: 0.1,
    });
    await probe.destroy();
  } catch (error) {
    return { reason: `cannot create a cgroup under ${where} (${(error as Error).message})` };
  }
  return { driver };
}

/** The CFS period both versions give the CPU quota in (100 ms). */
export const CFS_PERIOD_US = 100_000;

/** The quota of `cpuQuota` cores per {@link CFS_PERIOD_US}, at least 1 ms. */
export function cpuQuotaUs(cpuQuota: number): number {
  return Math.max(1000, Math.round(cpuQuota * CFS_PERIOD_US));
}

/** A sandbox's id, as its groups are named: nothing that could climb out of the parent. */
export function checkId(id: string): void {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`invalid sandbox id ${id}`);
}

export function readNumber(file: string): number | undefined {
  try {
    const text = readFileSync(file, 'utf8').trim();
    const value = text === '' ? NaN : Number(text);
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `key value` lines (memory.oom_control, memory.events, pids.events) as a map. */
export function readKeyed(file: string): Map<string, number> {
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

/** The pids listed in a group's cgroup.procs (none when it is gone). */
export async function pidsIn(dir: string): Promise<number[]> {
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

/** SIGKILLs each process listed in the group; how many there were. */
export async function killEach(dir: string): Promise<number> {
  const pids = await pidsIn(dir);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  return pids.length;
}

/** How a driver empties and removes its groups. */
export interface GroupRemoval {
  /** Kills what is in one group, resolving to how many processes were seen (0 when unknown). */
  kill(dir: string): Promise<number>;
  /** Removes an empty group (`rmdir`; EBUSY while it still holds processes). */
  remove(dir: string): Promise<void>;
}

const PLAIN_REMOVAL: GroupRemoval = { kill: killEach, remove: rmdir };

/** Kills what is in `dirs` once (each group's processes as {@link GroupRemoval.kill} finds them). */
export async function killIn(dirs: readonly string[], removal: GroupRemoval = PLAIN_REMOVAL): Promise<void> {
  for (const dir of dirs) await removal.kill(dir);
}

/** Kills what is in `dirs` until they are empty (a fork bomb refills them for a moment) and removes them. */
export async function killAndRemove(dirs: readonly string[], removal: GroupRemoval = PLAIN_REMOVAL): Promise<void> {
  for (let round = 0; round < 200; round += 1) {
    let left = 0;
    for (const dir of dirs) left += await removal.kill(dir);
    const removed = await Promise.all(
      dirs.map((dir) =>
        removal.remove(dir).then(
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
 * Removes the groups under `parent` of workers that are gone (a worker killed with SIGKILL leaves
 * its sandboxes' empty groups behind; its sandboxes died with it). Group names start
 * `sbx-<worker pid>-`; the groups of a live worker on the same machine are left alone.
 */
export async function sweepStale(parent: string, removalFor?: (dir: string) => GroupRemoval): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  for (const name of names) {
    const pid = /^sbx-(\d+)-/.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || isAlive(Number(pid))) continue;
    const dir = path.join(parent, name);
    await killAndRemove([dir], removalFor?.(dir)).catch(() => undefined);
  }
}
