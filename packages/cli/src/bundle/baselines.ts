import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { BASELINE_IMPORT_LIMITS, isSnapshotFile, type BaselineImportLimits } from '@testrun/contracts';
import type { Collector } from './collector';
import { globToRegExp, posixRelative } from './walk';

// The team's committed snapshots packed for the deployment to import as its baselines
// (`playwright.importBaselines`, docs/VISUAL.md "Importing committed baselines"): the files of the
// `<test file>-snapshots` folders Playwright's default snapshotPathTemplate uses, and those the
// globs match; snapshot files only (.png, .jpg, .jpeg, .txt), never under node_modules, never
// through a symbolic link (one is named in a warning and left out), within BASELINE_IMPORT_LIMITS.

const SKIPPED_DIRS = new Set(['node_modules', '.git']);

/** What walking found: regular snapshot files (absolute) and the links met where snapshots were looked for. */
interface Found {
  files: string[];
  links: string[];
}

/** Regular files below `dir` (or `dir` itself when a file) that `wanted` accepts; links are listed, never followed. */
function walkSnapshots(dir: string, wanted: (file: string) => boolean, found: Found): void {
  const pending = [dir];
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    const stat = lstatSync(current, { throwIfNoEntry: false });
    if (stat === undefined) continue;
    if (stat.isSymbolicLink()) {
      if (wanted(current) || current === dir) found.links.push(current);
    } else if (stat.isFile()) {
      if (wanted(current)) found.files.push(current);
    } else if (stat.isDirectory() && !SKIPPED_DIRS.has(path.basename(current)))
      for (const name of readdirSync(current)) pending.push(path.join(current, name));
  }
}

/** The caps' refusals of the files found (their sizes read through no link), none when within them. */
function capRefusals(root: string, files: readonly string[], limits: BaselineImportLimits): string[] {
  const refusals: string[] = [];
  const how = 'leave some out of playwright.importBaselines, or out of the bundle with playwright.exclude';
  if (files.length > limits.maxFiles)
    refusals.push(
      `playwright.importBaselines: ${files.length} snapshot files, over the cap of ${limits.maxFiles} (BASELINE_IMPORT_LIMITS.maxFiles); ${how}`,
    );
  let total = 0;
  for (const file of files) {
    const size = lstatSync(file).size;
    total += size;
    if (size > limits.maxFileBytes)
      refusals.push(
        `playwright.importBaselines: ${posixRelative(root, file)} is ${size} bytes, over the cap of ${limits.maxFileBytes} bytes for one baseline (BASELINE_IMPORT_LIMITS.maxFileBytes)`,
      );
  }
  if (total > limits.maxBytes)
    refusals.push(
      `playwright.importBaselines: the snapshot files are ${total} bytes, over the cap of ${limits.maxBytes} bytes (BASELINE_IMPORT_LIMITS.maxBytes); ${how}`,
    );
  return refusals;
}

/**
 * Adds the committed snapshots `importBaselines` names to the collector: each of `testFiles`'
 * `-snapshots` folder, and with globs the files under the root they match. A symbolic link where a
 * snapshot would be is left out with a warning; past a cap, the collector gets a refusal.
 */
export function addBaselines(
  collector: Collector,
  importBaselines: boolean | readonly string[],
  testFiles: readonly string[],
  warnings: string[],
  limits: BaselineImportLimits = BASELINE_IMPORT_LIMITS,
): void {
  if (importBaselines === false) return;
  const root = collector.root;
  const snapshot = (file: string) => {
    const rel = posixRelative(root, file);
    return !rel.startsWith('../') && isSnapshotFile(rel) && !collector.excluded(rel);
  };
  const found: Found = { files: [], links: [] };
  for (const test of testFiles) walkSnapshots(`${test}-snapshots`, snapshot, found);
  if (Array.isArray(importBaselines)) {
    const globs = importBaselines.map(globToRegExp);
    walkSnapshots(root, (file) => snapshot(file) && globs.some((g) => g.test(posixRelative(root, file))), found);
  }
  const files = [...new Set(found.files)].sort();
  if (found.links.length > 0) {
    const shown = found.links.slice(0, 5).map((l) => posixRelative(root, l));
    warnings.push(
      `playwright.importBaselines: left out ${found.links.length} symbolic link${found.links.length === 1 ? '' : 's'} where snapshots are looked for (${shown.join(', ')}${found.links.length > 5 ? ', …' : ''}): a baseline is packed from a regular file only`,
    );
  }
  const refusals = capRefusals(root, files, limits);
  if (refusals.length > 0) collector.refusals.push(...refusals);
  else for (const file of files) collector.addLocal(file);
}
