import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * docs/ARCHITECTURE.md's tables of core stay true: the subpath table names every subpath core's
 * package.json exports and no other, and the runs data access table names every module of
 * packages/core/src/runs/ and no other.
 */

const ROOT = path.resolve(__dirname, '../..');

async function architecture(): Promise<string> {
  return readFile(path.join(ROOT, 'docs', 'ARCHITECTURE.md'), 'utf8');
}

/** The first fenced block after `marker`. */
function blockAfter(doc: string, marker: string): string {
  const at = doc.indexOf(marker);
  if (at < 0) throw new Error(`ARCHITECTURE.md has no "${marker}"`);
  const match = /```\n([^]*?)```/.exec(doc.slice(at));
  if (!match?.[1]) throw new Error(`no table after "${marker}"`);
  return match[1];
}

test("the core subpath table names every subpath of core's package.json, and no other", async () => {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'packages', 'core', 'package.json'), 'utf8')) as {
    exports: Record<string, unknown>;
  };
  const exported = Object.keys(pkg.exports)
    .filter((k) => k !== './package.json')
    .map((k) => `@testrun/core/${k.slice(2)}`)
    .sort();
  const table = blockAfter(await architecture(), '## Core and the runs data access');
  const listed = [...table.matchAll(/^(@testrun\/core\/[\w-]+)/gm)].map((m) => m[1]).sort();
  expect(listed).toEqual(exported);
});

test('the runs data access table names every module of core/src/runs, and no other', async () => {
  const files = (await readdir(path.join(ROOT, 'packages', 'core', 'src', 'runs')))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'index.ts')
    .sort();
  const table = blockAfter(await architecture(), '**The runs data access.**');
  const listed = [...table.matchAll(/^([\w-]+\.ts)\s/gm)].map((m) => m[1]).sort();
  expect(listed).toEqual(files);
});
