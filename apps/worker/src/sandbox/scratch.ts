import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, statfsSync } from 'node:fs';
import { chmod, lchown, readdir, rmdir, statfs } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { isAlive } from './cgroups';

/*
 * The scratch directory's quota: a tmpfs of a fixed size mounted over the caller's directory for the
 * sandbox's life. A program that fills it gets ENOSPC inside; the worker's disk is untouched. Its
 * pages are memory, charged to the memory group of the process that writes them (the sandbox's, for
 * what the program writes), so the sandbox's memory limit bounds it too.
 *
 * The mount's source names the worker (`testrun-scratch-<pid>`), so that a later worker can unmount
 * what a killed one left ({@link sweepStaleScratch}).
 */

const run = promisify(execFile);
/** mount and umount from the system's directories, with nothing else of the worker's environment. */
const SYSTEM_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };
const SOURCE_PREFIX = 'testrun-scratch-';
/** statfs f_type of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;

function errorText(error: unknown): string {
  const stderr = typeof error === 'object' && error !== null && 'stderr' in error ? String(error.stderr).trim() : '';
  return stderr || (error instanceof Error ? error.message : String(error));
}

/**
 * Mounts a tmpfs of `bytes` at `dir` (an existing, empty directory the caller owns; root only). Copy
 * what the program needs into it after mounting, run the sandbox, read what it left, then
 * {@link unmountScratch}: everything in it is gone with the mount.
 */
export async function mountScratch(dir: string, bytes: number): Promise<void> {
  if (!Number.isSafeInteger(bytes) || bytes < 4096) throw new Error(`invalid scratch size ${bytes}`);
  // 0711: bubblewrap, without root's file capabilities, must enter it to make it the working directory.
  const options = `size=${bytes},mode=0711,nosuid,nodev`;
  try {
    await run('mount', ['-t', 'tmpfs', '-o', options, `${SOURCE_PREFIX}${process.pid}`, path.resolve(dir)], {
      env: SYSTEM_ENV,
    });
  } catch (error) {
    throw new Error(`cannot mount the scratch tmpfs at ${dir}: ${errorText(error)}`, { cause: error });
  }
}

/** Unmounts the scratch tmpfs at `dir` (its files go with it); nothing to do when it is not mounted. */
export async function unmountScratch(dir: string): Promise<void> {
  const target = path.resolve(dir);
  if (!scratchMounts().some((mount) => mount.target === target)) return;
  try {
    // Lazy: a process of the host still holding a file open there does not keep the mount alive.
    await run('umount', ['-l', target], { env: SYSTEM_ENV });
  } catch (error) {
    throw new Error(`cannot unmount the scratch tmpfs at ${dir}: ${errorText(error)}`, { cause: error });
  }
}

/**
 * {@link unmountScratch} at once, for a process's `exit` handler (which cannot wait): unmounts the
 * tmpfs at `dir` lazily; throws when umount fails (it is not mounted, say).
 */
export function unmountScratchNow(dir: string): void {
  execFileSync('umount', ['-l', path.resolve(dir)], { env: SYSTEM_ENV, stdio: 'ignore' });
}

/** The scratch mounts of this mount namespace: where, and the pid of the worker that made each. */
function scratchMounts(): { target: string; pid: number }[] {
  let text: string;
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const mounts: { target: string; pid: number }[] = [];
  for (const line of text.split('\n')) {
    // <id> <parent> <dev> <root> <mount point> <options> [optional...] - <fstype> <source> <super options>
    const [before, after] = line.split(' - ');
    const [fstype, source] = (after ?? '').split(' ');
    const target = (before ?? '').split(' ')[4];
    if (fstype !== 'tmpfs' || !source?.startsWith(SOURCE_PREFIX) || target === undefined) continue;
    // Spaces and the like are octal escapes in mountinfo.
    const decoded = target.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
    mounts.push({ target: decoded, pid: Number(source.slice(SOURCE_PREFIX.length)) });
  }
  return mounts;
}

/**
 * Unmounts the scratch tmpfs mounts of workers that are gone (a worker killed with SIGKILL leaves
 * them) and removes their directories when empty. A live worker's mounts are left alone.
 */
export async function sweepStaleScratch(): Promise<void> {
  for (const mount of scratchMounts()) {
    if (!Number.isInteger(mount.pid) || mount.pid === process.pid || isAlive(mount.pid)) continue;
    await run('umount', ['-l', mount.target], { env: SYSTEM_ENV }).catch(() => undefined);
    await rmdir(mount.target).catch(() => undefined);
  }
}

/** Whether `dir` is a tmpfs with (almost) no room left: a program that ended there most likely ran out of it. */
export async function scratchFull(dir: string): Promise<boolean> {
  try {
    return isFull(await statfs(dir));
  } catch {
    return false;
  }
}

/** {@link scratchFull}, at once: for a reader that cannot wait (a test's result as it arrives). */
export function scratchFullNow(dir: string): boolean {
  try {
    return isFull(statfsSync(dir));
  } catch {
    return false;
  }
}

function isFull(stats: { type: number; blocks: number; bavail: number }): boolean {
  if (stats.type !== TMPFS_MAGIC || stats.blocks === 0) return false;
  return stats.bavail <= Math.max(16, stats.blocks / 100);
}

/**
 * Gives the scratch directory and everything in it (symlinks themselves, not their targets) to
 * `uid`:`gid`; the directory itself becomes 0711, so that bubblewrap (root without its file
 * capabilities) can enter it while only the sandbox's user lists it.
 */
export async function prepareScratch(dir: string, uid: number, gid: number): Promise<void> {
  await chownTree(dir, uid, gid);
  await chmod(dir, 0o711);
}

async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  await lchown(dir, uid, gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const child = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(child, uid, gid);
    else await lchown(child, uid, gid);
  }
}
