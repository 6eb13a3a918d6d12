import { existsSync, readFileSync } from 'node:fs';
import { appendFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pidsIn, probeDriver, sweepStale, type CgroupDetection } from './cgroups';
import { cgroupV2, KERNEL_FS, removalOf, type CgroupFs } from './cgroups-v2';

/*
 * The worker's own cgroup on a cgroup v2 machine, made the parent of its sandboxes' groups. A process
 * may create groups only where it can write (its cgroup delegated to it: a cgroup namespace of its
 * own, the mount writable), and a group that has processes cannot pass controllers on to children
 * (the "no internal processes" rule): so the worker's cgroup's processes move into a leaf,
 * `<own>/testrun-worker`, before memory, pids and cpu are enabled in `<own>/cgroup.subtree_control`
 * and the sandboxes' groups `<own>/sbx-…` are made beside it.
 */

/** Where the machine's cgroup v2 facts are read and groups made (a test lays out its own). */
export interface CgroupV2Host {
  /** The file giving the worker's cgroup (`0::<path>`, relative to the mount). */
  selfCgroupFile: string;
  fs: CgroupFs;
}

export const KERNEL_HOST: CgroupV2Host = { selfCgroupFile: '/proc/self/cgroup', fs: KERNEL_FS };

const NEEDED = ['memory', 'pids', 'cpu'] as const;
/** The leaf the worker's cgroup's processes move to. */
const LEAF = 'testrun-worker';
const DELEGATE_HINT =
  'the worker (root) needs its cgroup delegated to it and /sys/fs/cgroup writable: a privileged container on a cgroup v2 Kubernetes node, docker run --privileged --cgroupns=private, or a systemd unit with Delegate=yes (docs/SANDBOX.md, "Kubernetes")';

function words(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

function missingIn(file: string): string[] {
  const present = words(file);
  return NEEDED.filter((controller) => !present.includes(controller));
}

/**
 * The worker's cgroup directory under `root`, or why it cannot be used. A worker restarted inside
 * the leaf its predecessor made uses that leaf's parent.
 */
function ownCgroup(root: string, host: CgroupV2Host): { dir: string } | { reason: string } {
  let text: string;
  try {
    text = readFileSync(host.selfCgroupFile, 'utf8');
  } catch (error) {
    return { reason: `cannot read ${host.selfCgroupFile} (${(error as Error).message})` };
  }
  const own = /^0::(\/.*)$/m.exec(text)?.[1];
  if (own === undefined) return { reason: `${host.selfCgroupFile} names no cgroup v2 group of the worker` };
  if (own.split('/').includes('..'))
    return {
      reason: `the worker's cgroup ${own} is outside the cgroup namespace mounted at ${root}: ${DELEGATE_HINT}`,
    };
  const dir = path.join(root, own);
  return { dir: path.basename(dir) === LEAF ? path.dirname(dir) : dir };
}

function errorCode(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  return code ?? message;
}

/** Moves every process of `own` into `leaf` (the worker included); processes that end meanwhile are skipped. */
async function moveIntoLeaf(own: string, leaf: string): Promise<void> {
  const moved = new Set<number>();
  for (let round = 0; round < 10; round += 1) {
    const pids = (await pidsIn(own)).filter((pid) => !moved.has(pid));
    if (pids.length === 0) return;
    for (const pid of pids) {
      moved.add(pid);
      await appendFile(path.join(leaf, 'cgroup.procs'), `${pid}\n`).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      });
    }
  }
}

/**
 * Makes `own` the parent of the sandboxes' groups: its processes in the leaf (unless it is the
 * hierarchy's real root, which may hold processes and has no `cgroup.type`), then memory, pids and
 * cpu enabled for its children. Returns why not, naming what an operator must do.
 */
async function delegate(root: string, own: string, fs: CgroupFs): Promise<string | undefined> {
  const leaf = path.join(own, LEAF);
  try {
    if (existsSync(path.join(own, 'cgroup.type'))) {
      if (!existsSync(leaf)) await fs.mkdir(leaf);
      await moveIntoLeaf(own, leaf);
    }
    await writeFile(path.join(own, 'cgroup.subtree_control'), NEEDED.map((c) => `+${c}`).join(' '));
    return undefined;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EROFS')
      return `the cgroup2 mount at ${root} is read-only (a container that is not privileged): ${DELEGATE_HINT}`;
    if (code === 'EBUSY')
      return `cannot enable memory, pids and cpu in ${own}/cgroup.subtree_control (EBUSY): processes are left in ${own} that could not be moved into ${leaf}`;
    return `the worker's cgroup ${own} is not delegated to it (${code}): ${DELEGATE_HINT}`;
  }
}

/**
 * The v2 driver when `root` (a cgroup2 mount) offers memory, pids and cpu, the worker's own cgroup
 * has them and is the worker's to divide, and a probe group can be made and removed (after the groups
 * of workers that are gone are removed). Otherwise why not.
 */
export async function detectV2(root: string, host: CgroupV2Host = KERNEL_HOST): Promise<CgroupDetection> {
  const rootFile = path.join(root, 'cgroup.controllers');
  const unavailable = missingIn(rootFile);
  if (unavailable.length > 0)
    return {
      reason: `the cgroup v2 controllers ${unavailable.join(', ')} are not available at ${root} (its cgroup.controllers: ${words(rootFile).join(' ') || 'none'}): on a host they are held by cgroup v1 hierarchies or disabled on the kernel's command line; in a container, its runtime's cgroup does not delegate them`,
    };
  const own = ownCgroup(root, host);
  if ('reason' in own) return own;
  const notEnabled = missingIn(path.join(own.dir, 'cgroup.controllers'));
  if (notEnabled.length > 0)
    return {
      reason: `the cgroup v2 controllers ${notEnabled.join(', ')} are not enabled for the worker's cgroup ${own.dir}: enable them in ${path.dirname(own.dir)}/cgroup.subtree_control (+memory +pids +cpu); ${DELEGATE_HINT}`,
    };
  const refused = await delegate(root, own.dir, host.fs);
  if (refused !== undefined) return { reason: refused };
  await sweepStale(own.dir, (dir) => removalOf(host.fs, dir));
  return probeDriver(cgroupV2(own.dir, host.fs), own.dir);
}
