import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const PREFIX = 'testrun-worker-';

/**
 * The start of the name of a directory of this process's own under `root`, for mkdtemp: named
 * after its pid, so the next worker to start removes it if this process is killed before it can
 * ({@link sweepStaleScratchDirs}).
 */
export function scratchDirPrefix(root: string = os.tmpdir()): string {
  return path.join(root, `${PREFIX}${process.pid}-`);
}

/** A scratch directory of this process's own under `root`, named after its pid. */
export function makeScratchDir(root: string = os.tmpdir()): Promise<string> {
  return mkdtemp(scratchDirPrefix(root));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}

/**
 * Removes the scratch directories of worker processes that are gone (killed before they could
 * clean up, say). Directories of live processes, and anything not named like ours, are left alone;
 * so is one that cannot be removed (still a mount point, say), with the reason in `failed`: a stale
 * directory never stops a worker from starting.
 */
export async function sweepStaleScratchDirs(
  root: string = os.tmpdir(),
): Promise<{ removed: string[]; failed: { dir: string; reason: string }[] }> {
  const removed: string[] = [];
  const failed: { dir: string; reason: string }[] = [];
  for (const name of await readdir(root).catch(() => [])) {
    const match = new RegExp(`^${PREFIX}(\\d+)-`).exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    if (pid === process.pid || isAlive(pid)) continue;
    const dir = path.join(root, name);
    try {
      await rm(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch (error) {
      failed.push({ dir, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return { removed, failed };
}
