import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { keepTransformCache, TRANSFORM_DIR } from './transform-cache';

/*
 * The folders of the scratch directory the worker reads after (or while) a sandbox runs are the
 * sandbox's: a test can leave any of them as a symlink to a folder of the host. The worker must
 * read none of the host's files through them (the results file the tail reads: runner/tail.test.ts;
 * the race against a folder swapped while the worker reads is test/worker/sandbox/scratch-reads.test.ts).
 */

let base: string;
let scratch: string;
let host: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'testrun-transform-cache-'));
  scratch = path.join(base, 'scratch');
  host = path.join(base, 'host');
  await mkdir(scratch);
  await mkdir(host);
});

afterEach(() => rm(base, { recursive: true, force: true }));

test('a transform cache folder that is a symlink to a host folder of the same layout adds nothing to the kept cache', async () => {
  // A host folder laid out as Playwright's cache (two hex digits, plain names), as git's objects are.
  await mkdir(path.join(host, 'ab'));
  await writeFile(path.join(host, 'ab', 'host-file.js'), 'host secret');
  await symlink(host, path.join(scratch, TRANSFORM_DIR));
  const kept = path.join(base, 'kept');
  await mkdir(kept);
  await keepTransformCache(scratch, kept);
  expect(await readdir(kept)).toEqual([]);
  // A real folder with a folder of the layout that is a symlink: nothing either.
  await rm(path.join(scratch, TRANSFORM_DIR));
  await mkdir(path.join(scratch, TRANSFORM_DIR));
  await symlink(path.join(host, 'ab'), path.join(scratch, TRANSFORM_DIR, 'ab'));
  await keepTransformCache(scratch, kept);
  expect(await readdir(kept)).toEqual([]);
  // What the sandbox compiled, in real folders, is kept.
  await rm(path.join(scratch, TRANSFORM_DIR, 'ab'));
  await mkdir(path.join(scratch, TRANSFORM_DIR, 'cd'));
  await writeFile(path.join(scratch, TRANSFORM_DIR, 'cd', 'spec.js'), 'compiled');
  await keepTransformCache(scratch, kept);
  expect(await readdir(path.join(kept, 'cd'))).toEqual(['spec.js']);
});
