import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleOf } from '../../packages/cli/src/bundle';
import { REPO_ROOT } from './processes';

/*
 * The bundles of the fixture projects, packed once per jest run. Packing runs the team's
 * `playwright test --list` (the CLI's packer), a second or two of a Playwright start that blocks the
 * test's process; many files deploy the same fixture. Only projects under test/fixtures/ are kept,
 * which no test changes; the key still covers every byte of the fixture's folder and its
 * `playwright:` section, and the folder (TESTRUN_TEST_BUNDLES, made by the global setup) goes with
 * the run, so a change to the packer is never met by a bundle it did not make.
 */

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures') + path.sep;

/** A fixture's files, their paths and bytes, in a stable order (node_modules left out: the run's own). */
function hashTree(hash: ReturnType<typeof createHash>, dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) hashTree(hash, full);
    else if (entry.isFile())
      hash
        .update(`${path.relative(FIXTURES, full)}\0`)
        .update(readFileSync(full))
        .update('\0');
  }
}

/** The cache file of a fixture project's bundle, or null when it is not a fixture's (or no cache is set up). */
function cacheFile(projectFile: string, project: Record<string, unknown>): string | null {
  const dir = process.env.TESTRUN_TEST_BUNDLES;
  const root = path.dirname(path.resolve(projectFile));
  if (!dir || !(root + path.sep).startsWith(FIXTURES)) return null;
  const hash = createHash('sha256').update(`${path.relative(FIXTURES, path.resolve(projectFile))}\0`);
  hash.update(`${JSON.stringify(project.playwright ?? null)}\0`);
  hashTree(hash, root);
  return path.join(dir, `${hash.digest('hex')}.json`);
}

/** The fixture project packed as `testrun deploy --file` packs it (the CLI's own packer): its bytes and digest. */
export async function packFixture(
  projectFile: string,
  project: Record<string, unknown>,
): Promise<{ body: Buffer; digest: string }> {
  const file = cacheFile(projectFile, project);
  if (file) {
    const kept = await readFile(file, 'utf8').then(
      (text) => JSON.parse(text) as { digest: string; bytes: string },
      () => null,
    );
    if (kept) return { body: Buffer.from(kept.bytes, 'base64'), digest: kept.digest };
  }
  const packed = await bundleOf(projectFile, project);
  if (!packed) throw new Error('the fixture project has no playwright section');
  const body = Buffer.from(packed.bytes);
  if (file) {
    // Written whole, then renamed: the other jest worker reads a complete file or none.
    const partial = `${file}.${process.pid}.partial`;
    await writeFile(partial, JSON.stringify({ digest: packed.digest, bytes: body.toString('base64') }));
    await rename(partial, file);
  }
  return { body, digest: packed.digest };
}
