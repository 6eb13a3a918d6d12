import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { cp, lstat, mkdir, open, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

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
 * Playwright's layout (a folder of two hex digits, plain names) are kept, none through a link, and
 * the whole stays under a size cap.
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

/** Regular files of the scratch's cache, by their path relative to it. */
async function entriesOf(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const folder of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (!folder.isDirectory() || !FOLDER.test(folder.name)) continue;
    for (const file of await readdir(path.join(dir, folder.name), { withFileTypes: true }).catch(() => []))
      if (file.isFile() && FILE.test(file.name)) found.push(path.join(folder.name, file.name));
  }
  return found;
}

/** A file's bytes, not through a link and not past the cap; null otherwise. */
async function readPlain(file: string): Promise<Buffer | null> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
  if (!handle) return null;
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > MAX_FILE_BYTES) return null;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** How many bytes the kept cache holds. */
async function keptBytes(kept: string): Promise<number> {
  let total = 0;
  for (const entry of await entriesOf(kept)) total += (await lstat(path.join(kept, entry))).size;
  return total;
}

/**
 * Adds what the ended sandbox compiled and the kept cache lacks (each file written whole, then
 * renamed into place, so a concurrent reader sees it whole or not at all). Never throws: a cache
 * that cannot be kept only costs the next sandbox the compile.
 */
export async function keepTransformCache(scratchDir: string, kept: string | undefined): Promise<void> {
  if (kept === undefined) return;
  const source = path.join(scratchDir, TRANSFORM_DIR);
  try {
    const known = new Set(await entriesOf(kept));
    const added = (await entriesOf(source)).filter((entry) => !known.has(entry));
    if (added.length === 0) return;
    let total = await keptBytes(kept);
    for (const entry of added) {
      const bytes = await readPlain(path.join(source, entry));
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
