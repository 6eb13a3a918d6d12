import { existsSync, readFileSync, rmSync } from 'node:fs';
import { cp, lstat, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { scratchDirPrefix } from '../support/scratch-dir';
import { mountScratch, unmountScratch, unmountScratchNow } from './scratch';

/*
 * The worker's share: one tmpfs of its own holding everything of the host a sandbox is given (the
 * service's Playwright packages, the compiled code the sandbox runs, ffmpeg, the code cache, the
 * egress proxy's sockets). A bind mount's fourth field in the sandbox's /proc/self/mountinfo is its
 * source's path within its file system: bound from the host's disk it names where the worker, its
 * repository and its caches live; bound from here it reads `/playwright-core`.
 *
 * One per process, mounted when first asked for (a worker that never sandboxes never mounts it), as
 * the scratch quotas are (scratch.ts: root only; its source names the worker, so a later worker
 * unmounts the share of one that was killed), at `testrun-worker-<pid>-share` in the OS temporary
 * directory (named like the worker's scratch directories, which the same sweep removes). What is in
 * it is found by name, so every module instance of the process (each test file's, under jest) uses
 * the same one. Gone when the process exits.
 */

/** The share's size: a bound, not a reservation (a tmpfs holds pages only for what is written). */
const SHARE_BYTES = 512 * 1024 * 1024;
/** The file that names the process the share belongs to (its pid may be a dead process's again). */
const OWNER_FILE = '.owner';

let mounted: Promise<string> | undefined;
const made = new Map<string, Promise<string>>();

/** This process, among all that had its pid: its pid and start time (/proc/self/stat). */
function owner(): string {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return `${process.pid} ${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]}`;
}

/** The share's place on the host. */
function sharePlace(): string {
  return `${scratchDirPrefix()}share`;
}

/** Whether the share at `dir` is this process's, mounted: a folder of this user's that only it writes, naming this process. */
async function isMine(dir: string): Promise<boolean> {
  try {
    const stat = await lstat(dir);
    if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) return false;
    return (await readFile(path.join(dir, OWNER_FILE), 'utf8')) === owner();
  } catch {
    return false;
  }
}

async function mountShare(): Promise<string> {
  const dir = sharePlace();
  if (await isMine(dir)) return dir;
  // A process that had this pid before left it: gone, and made anew.
  await unmountScratch(dir);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { mode: 0o700 });
  await mountScratch(dir, SHARE_BYTES);
  await writeFile(path.join(dir, OWNER_FILE), owner(), { mode: 0o600 });
  process.once('exit', () => {
    try {
      unmountScratchNow(dir);
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Left to the next worker's sweep.
    }
  });
  return dir;
}

/** The share's directory on the host, mounted on the first call. */
function shareDir(): Promise<string> {
  mounted ??= mountShare().catch((error: unknown) => {
    mounted = undefined;
    throw error;
  });
  return mounted;
}

/**
 * Unmounts this process's share and removes its place, if it has one (for a process that stays
 * after its last sandbox, such as a test runner); the next call that needs it mounts it again.
 */
export async function releaseShare(): Promise<void> {
  mounted = undefined;
  made.clear();
  const dir = sharePlace();
  if (!(await isMine(dir))) return;
  await unmountScratch(dir);
  await rm(dir, { recursive: true, force: true });
}

/**
 * Makes `name` (a relative path of plain names) in the share once: `make` writes it at the path it
 * is given, which then takes its name whole (a failure leaves nothing). Its path.
 */
function makeOnce(name: string, make: (at: string) => Promise<void>): Promise<string> {
  let promise = made.get(name);
  if (promise === undefined) {
    promise = (async () => {
      const parts = name.split('/');
      if (parts.some((part) => part === '' || part === '.' || part === '..'))
        throw new Error(`${name} is not a name in the share`);
      const to = path.join(await shareDir(), ...parts);
      if (existsSync(to)) return to;
      const partial = `${to}.partial`;
      await mkdir(path.dirname(to), { recursive: true, mode: 0o755 });
      await rm(partial, { recursive: true, force: true });
      try {
        await make(partial);
        await rename(partial, to);
      } catch (error) {
        await rm(partial, { recursive: true, force: true });
        throw error;
      }
      return to;
    })().catch((error: unknown) => {
      made.delete(name);
      throw error;
    });
    made.set(name, promise);
  }
  return promise;
}

/**
 * A copy of the host's file or folder `from` in the share, at `name`, made on the first call (the
 * same bytes, modes and symlinks); its path. Sandboxes bind it read only: copied, not linked, so
 * that nothing of where it came from shows inside.
 */
export function shareCopy(name: string, from: string): Promise<string> {
  return makeOnce(name, (at) => cp(from, at, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true }));
}

/** A folder of the share (root's, with `mode`), filled by `fill` if given, made on the first call; its path. */
export function shareFolder(name: string, mode: number, fill?: (dir: string) => void): Promise<string> {
  return makeOnce(name, async (at) => {
    await mkdir(at, { mode });
    fill?.(at);
  });
}
