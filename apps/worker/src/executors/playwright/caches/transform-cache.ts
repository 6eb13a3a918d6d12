import { randomUUID } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { cp, lstat, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { listScratchDir, readScratchFile } from '../../../sandbox';

/*
 * The TypeScript Playwright compiled for a bundle, kept per worker, workspace and bundle
 * (docs/PLAYWRIGHT.md, "Batches"): Playwright Test compiles the config, the specs and their modules
 * with Babel when it loads them, and keeps what it compiled in PLAYWRIGHT_TRANSFORM_CACHE_DIR. A fresh
 * sandbox would compile everything again, about a CPU-second for a small project; instead each
 * sandbox starts with a copy of what earlier sandboxes of the same bundle compiled, and what it
 * compiled anew is added once it has ended.
 *
 * The cache is written by the sandbox, so by the team's own code: it is only ever seeded into
 * sandboxes of the same workspace's same bundle, which run that code anyway. Only regular files of
 * Playwright's layout (a folder of two hex digits, plain names) are kept, none through a link in any
 * folder (the scratch's `.transform` itself may be a symlink the test made), and the whole stays
 * under a size cap.
 */

/** Where the cache is in the scratch directory (the sandbox's /work/.transform). */
export const TRANSFORM_DIR = '.transform';

const MAX_FILE_BYTES = 8 * 1024 * 1024;
const MAX_TOTAL_BYTES = 64 * 1024 * 1024;
const FOLDER = /^[0-9a-f]{2}$/;
const FILE = /^[\w.-]{1,200}$/;

/** Copies the bundle's kept cache (if any) into the scratch directory, before the sandbox starts. */
export async function seedTransformCache(kept: string | undefined, scratchDir: string): Promise<void> {
  const target = path.join(scratchDir, TRANSFORM_DIR);
  await mkdir(target, { recursive: true });
  if (kept === undefined) return;
  await cp(kept, target, { recursive: true, force: false, errorOnExist: false }).catch(() => undefined);
}

/** Regular files of a cache laid out as Playwright's, by their path relative to it, as `list` lists folders. */
async function entriesOf(list: (relative: string) => Promise<Dirent[]>): Promise<string[]> {
  const found: string[] = [];
  for (const folder of await list('').catch(() => [])) {
    if (!folder.isDirectory() || !FOLDER.test(folder.name)) continue;
    for (const file of await list(folder.name).catch(() => []))
      if (file.isFile() && FILE.test(file.name)) found.push(path.join(folder.name, file.name));
  }
  return found;
}

/** The worker's own kept cache, listed by path. */
const keptEntries = (kept: string) =>
  entriesOf((relative) => readdir(path.join(kept, relative), { withFileTypes: true }));

/** The scratch's cache, written by the sandbox: listed and read through no link (sandbox/beneath.ts). */
const scratchEntries = (scratchDir: string) =>
  entriesOf((relative) => listScratchDir(scratchDir, path.join(TRANSFORM_DIR, relative)));

/** A file of the scratch's cache, not through a link and not past the cap; null otherwise. */
function readPlain(scratchDir: string, entry: string): Promise<Buffer | null> {
  return readScratchFile(scratchDir, path.join(TRANSFORM_DIR, entry), MAX_FILE_BYTES).catch(() => null);
}

/** How many bytes the kept cache holds. */
export async function keptBytes(kept: string): Promise<number> {
  let total = 0;
  for (const entry of await keptEntries(kept)) total += (await lstat(path.join(kept, entry))).size;
  return total;
}

/**
 * Adds what the ended sandbox compiled and the kept cache lacks (each file written whole, then
 * renamed into place, so a concurrent reader sees it whole or not at all). Never throws: a cache
 * that cannot be kept only costs the next sandbox the compile.
 */
export async function keepTransformCache(scratchDir: string, kept: string | undefined): Promise<void> {
  if (kept === undefined) return;
  try {
    const known = new Set(await keptEntries(kept));
    const added = (await scratchEntries(scratchDir)).filter((entry) => !known.has(entry));
    if (added.length === 0) return;
    let total = await keptBytes(kept);
    for (const entry of added) {
      const bytes = await readPlain(scratchDir, entry);
      if (!bytes || total + bytes.length > MAX_TOTAL_BYTES) continue;
      total += bytes.length;
      const target = path.join(kept, entry);
      await mkdir(path.dirname(target), { recursive: true });
      const partial = `${target}.${randomUUID()}.partial`;
      await writeFile(partial, bytes, { mode: 0o644 });
      await rename(partial, target).catch(() => rm(partial, { force: true }));
    }
  } catch {
    // Kept as far as it went.
  }
}
