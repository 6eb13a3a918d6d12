// The baselines of a run's snapshots placed in its sandbox's copy of the bundle, at the paths the
// project's snapshotPathTemplate gives them (docs/VISUAL.md), before the sandbox starts: Playwright
// then compares against them as against files of the repository.
import { constants } from 'node:fs';
import { lstat, mkdir, open, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pathInBundle } from './snapshots';
import type { PlacedBaseline } from './types';

/** Whether `dir` (under `root`) is a real folder all the way down from `root`, made where missing. */
async function realFolder(root: string, dir: string): Promise<boolean> {
  let at = root;
  for (const part of path.relative(root, dir).split(path.sep).filter(Boolean)) {
    at = path.join(at, part);
    const found = await lstat(at).catch(() => null);
    if (found === null) await mkdir(at);
    else if (!found.isDirectory()) return false;
  }
  return true;
}

/**
 * Writes each baseline at its path under `bundleDir` (the scratch copy), replacing a snapshot file
 * there; a path out of the bundle, not a snapshot's (pathInBundle), or under anything but folders,
 * is skipped. Never follows a link.
 */
export async function placeBaselines(bundleDir: string, baselines: readonly PlacedBaseline[]): Promise<number> {
  let placed = 0;
  for (const baseline of baselines) {
    const rel = pathInBundle(bundleDir, baseline.path);
    if (rel === null) continue;
    const file = path.join(bundleDir, rel);
    if (!(await realFolder(bundleDir, path.dirname(file)))) continue;
    await unlink(file).catch(() => undefined);
    const handle = await open(
      file,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o644,
    );
    try {
      await handle.writeFile(baseline.body);
    } finally {
      await handle.close();
    }
    placed += 1;
  }
  return placed;
}
