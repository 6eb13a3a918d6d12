import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  keepTransformCache,
  TRANSFORM_DIR,
} from '../../../apps/worker/src/executors/playwright/caches/transform-cache';
import { sandboxDir, runFixture } from './sandbox-dir';

/*
 * What Playwright compiled of a bundle's TypeScript in one sandbox is kept beside the bundle and
 * seeded into the next sandbox of the same bundle, which loads it instead of compiling again
 * (transform-cache.ts). Only regular files of Playwright's layout are kept.
 */

jest.setTimeout(120_000);

const dir = sandboxDir('transform');

async function run(kept: string) {
  const [result] = await runFixture('typescript', {
    configFile: 'e2e/playwright.config.ts',
    scratchDir: await dir.scratch(),
    transformCache: kept,
    tests: [{ file: 'e2e/greeting.spec.ts', project: 'app', titlePath: ['greets'] }],
  });
  return result;
}

/** The kept files (relative paths) and the one holding `needle`'s compiled code. */
async function keptFiles(kept: string, needle: string): Promise<{ files: string[]; holding: string | undefined }> {
  const files: string[] = [];
  let holding: string | undefined;
  for (const folder of await readdir(kept))
    for (const file of await readdir(path.join(kept, folder))) {
      files.push(`${folder}/${file}`);
      if (file.endsWith('.js') && (await readFile(path.join(kept, folder, file), 'utf8')).includes(needle))
        holding = path.join(kept, folder, file);
    }
  return { files, holding };
}

test('the second sandbox of a bundle loads what the first compiled', async () => {
  const kept = path.join(dir.base(), 'bundle.transform');
  expect((await run(kept))?.status).toBe('passed');
  const { files, holding } = await keptFiles(kept, 'function greeting');
  // The config, the spec and its helper, each with its source map.
  expect(files.filter((f) => f.endsWith('.js')).length).toBeGreaterThanOrEqual(3);
  if (!holding) throw new Error(`no kept file holds the helper's code: ${files.join(', ')}`);
  // Change the kept helper (a valid entry: Playwright checks only its hash header). Loaded from the
  // cache, it greets otherwise, and the spec's expectation fails on the text the cache gave.
  const code = (await readFile(holding, 'utf8')).split('\n').slice(1).join('\n');
  const changed = code.replace('hello, ', 'hello from the kept cache, ');
  expect(changed).not.toBe(code);
  const sha1 = createHash('sha1').update(changed).digest('hex');
  await writeFile(holding, `// ${sha1}\n${changed}`);
  const second = await run(kept);
  expect(second?.status).toBe('failed');
  expect(second?.errors.map((e) => e.message).join('\n')).toContain('hello from the kept cache, team');
});

test('only regular files of the cache layout are kept, none through a link, none replaced', async () => {
  const scratch = await mkdtemp(path.join(dir.base(), 'keep-'));
  const kept = path.join(dir.base(), 'kept');
  const cache = path.join(scratch, TRANSFORM_DIR);
  await mkdir(path.join(cache, 'ab'), { recursive: true });
  await mkdir(path.join(kept, 'ab'), { recursive: true });
  await writeFile(path.join(cache, 'ab', 'one.js'), 'compiled');
  await writeFile(path.join(cache, 'ab', 'two.js'), 'replacement');
  await writeFile(path.join(kept, 'ab', 'two.js'), 'original');
  await symlink('/etc/hostname', path.join(cache, 'ab', 'link.js'));
  await mkdir(path.join(cache, 'not-hex'));
  await writeFile(path.join(cache, 'not-hex', 'x.js'), 'elsewhere');
  await keepTransformCache(scratch, kept);
  expect((await readdir(kept)).sort()).toEqual(['ab']);
  expect((await readdir(path.join(kept, 'ab'))).sort()).toEqual(['one.js', 'two.js']);
  expect(await readFile(path.join(kept, 'ab', 'two.js'), 'utf8')).toBe('original');
});
