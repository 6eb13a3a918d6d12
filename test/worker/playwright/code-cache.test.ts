import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  CODE_CACHE_HOOK,
  CodeCache,
  IMPORT_SITES,
} from '../../../apps/worker/src/executors/playwright/caches/code-cache';
import { servicePlaywright } from '../../../apps/worker/src/executors/playwright/runner/versions';
import { runFixture, sandboxDir } from './sandbox-dir';

/*
 * V8's code cache of Playwright's modules (code-cache.ts): the worker makes it outside any sandbox,
 * every process of a sandbox compiles the service's Playwright from it, a file whose bytes differ
 * from the cache's is compiled afresh, and no sandbox can write it.
 */

jest.setTimeout(120_000);

const exec = promisify(execFile);
const dir = sandboxDir('code-cache');

/**
 * Runs `node --require <hook> -e <script>` with the hook's settings (writing, as the worker's
 * producer: with what finds a module's dynamic imports), from `cwd`; its stdout parsed as JSON.
 */
async function withHook(cacheDir: string, script: string, write = false, cwd?: string): Promise<unknown> {
  const env = { TESTRUN_CODE_CACHE_DIR: cacheDir, ...(write ? { TESTRUN_CODE_CACHE_WRITE: '1' } : {}) };
  const finder = `require(${JSON.stringify(CODE_CACHE_HOOK)}).useImportSites(require(${JSON.stringify(IMPORT_SITES)}).importSites);`;
  const { stdout } = await exec(
    process.execPath,
    ['--require', CODE_CACHE_HOOK, '-e', write ? finder + script : script],
    {
      env,
      cwd,
    },
  );
  return JSON.parse(stdout);
}

/** A module of over 100,000 characters that requires a neighbour and reports what it was given. */
function largeModule(value: string): string {
  const padding = Array.from({ length: 3000 }, (_, i) => `function pad${i}() { return ${i}; }`).join('\n');
  return `const other = require('./other');
module.exports = { value: '${value}', other, dir: __dirname, file: __filename, resolved: require.resolve('./other') };
${padding}
`;
}

test("a large module's cache is used only for the very bytes it was made from", async () => {
  const root = await mkdtemp(path.join(dir.base(), 'hook-'));
  const cacheDir = path.join(root, 'cache');
  await CodeCache.create(cacheDir, servicePlaywright().playwright).then((made) => made.ready());
  const moduleFile = path.join(root, 'large.js');
  await writeFile(path.join(root, 'other.js'), "module.exports = 'neighbour';");
  await writeFile(moduleFile, largeModule('A'));
  const load = `const m = require(${JSON.stringify(moduleFile)}); const { stats } = require(${JSON.stringify(CODE_CACHE_HOOK)}); console.log(JSON.stringify({ ...m, stats }))`;
  const module = { other: 'neighbour', dir: root, file: moduleFile, resolved: path.join(root, 'other.js') };

  expect(await withHook(cacheDir, load, true)).toEqual({
    value: 'A',
    ...module,
    stats: { accepted: 0, rejected: 0, written: 0 },
  });
  const sha = createHash('sha256').update(largeModule('A')).digest('hex');
  expect(await readdir(cacheDir)).toContain(`${sha}.v8`);
  expect(await withHook(cacheDir, load)).toEqual({
    value: 'A',
    ...module,
    stats: { accepted: 1, rejected: 0, written: 0 },
  });

  // The same length, other bytes: V8 alone would take the cache (it checks the length); the hook does not.
  await writeFile(moduleFile, largeModule('B'));
  expect(await withHook(cacheDir, load)).toEqual({
    value: 'B',
    ...module,
    stats: { accepted: 0, rejected: 0, written: 0 },
  });

  // A damaged cache: V8 refuses it and the module compiles as usual.
  await writeFile(moduleFile, largeModule('A'));
  await writeFile(path.join(cacheDir, `${sha}.v8`), Buffer.alloc(4096, 7));
  expect(await withHook(cacheDir, load)).toEqual({
    value: 'A',
    ...module,
    stats: { accepted: 0, rejected: 1, written: 0 },
  });
});

const CACHED_TITLE = 'the runner and this worker load the hook and compile Playwright from the cache';

/** Runs tests of the code-cache fixture (by title) in a sandbox, or as `options` say. */
async function runCacheFixture(titles: string[], options: { codeCache?: string; isolation?: 'none' } = {}) {
  const results = await runFixture('code-cache', {
    configFile: 'playwright.config.js',
    scratchDir: await dir.scratch(),
    ...options,
    tests: titles.map((title) => ({ file: 'cache.spec.js', project: 'app', titlePath: [title] })),
  });
  return results.map((r) => [r.status, r.errors.map((e) => e.message).join('\n')]);
}

test("a sandbox's runner and workers compile Playwright from the worker's cache, and cannot write it", async () => {
  const made = await CodeCache.create(path.join(dir.base(), 'code-cache'), servicePlaywright().playwright);
  expect(await made.ready()).toBe(true);
  const results = await runCacheFixture([CACHED_TITLE, 'the cache cannot be written from here'], {
    codeCache: made.dir,
  });
  expect(results).toEqual([
    ['passed', ''],
    ['passed', ''],
  ]);
  expect((await readdir(made.dir)).every((name) => /^[0-9a-f]{64}\.(v8|imports)$/.test(name))).toBe(true);
});

test('without a cache, the same tests see no hook', async () => {
  const [result] = await runCacheFixture([CACHED_TITLE]);
  expect(result?.[0]).toBe('failed');
  expect(result?.[1]).toContain('null');
});

test('without the sandbox (PLAYWRIGHT_SANDBOX=off) the processes use it too', async () => {
  const made = await CodeCache.create(path.join(dir.base(), 'code-cache-none'), servicePlaywright().playwright);
  expect(await made.ready()).toBe(true);
  expect(await runCacheFixture([CACHED_TITLE], { codeCache: made.dir, isolation: 'none' })).toEqual([['passed', '']]);
});

test('a cache that cannot be made is said once, with why', async () => {
  // A `playwright` package whose runner module ends the process that loads it.
  const fake = await mkdtemp(path.join(dir.base(), 'fake-playwright-'));
  await mkdir(path.join(fake, 'lib'));
  await writeFile(path.join(fake, 'lib', 'program.js'), 'process.exit(3);');
  const heard: string[] = [];
  const made = await CodeCache.create(path.join(fake, 'cache'), fake, (reason) => heard.push(reason));
  made.use();
  expect(await made.ready()).toBe(false);
  expect(await made.ready()).toBe(false);
  expect(heard).toEqual(['its process ended with exit code 3']);
  // Not marked made: the next worker of the process tries again.
  const again = await CodeCache.create(path.join(fake, 'cache'), fake, (reason) => heard.push(reason));
  expect(await again.ready()).toBe(false);
  expect(heard).toEqual(['its process ended with exit code 3', 'its process ended with exit code 3']);
});

test("a folder made whole before (another worker of the process's) is not made again", async () => {
  const folder = path.join(dir.base(), 'code-cache-again');
  expect(await (await CodeCache.create(folder, servicePlaywright().playwright)).ready()).toBe(true);
  const names = (await readdir(folder)).sort();
  expect(names.length).toBeGreaterThan(0);
  await rm(path.join(folder, names[0] ?? ''));
  expect(await (await CodeCache.create(folder, servicePlaywright().playwright)).ready()).toBe(true);
  expect((await readdir(folder)).sort()).toEqual(names.slice(1));
});

test('an ES module project (config and spec loaded through import()) runs with the cache ready', async () => {
  const made = await CodeCache.create(path.join(dir.base(), 'code-cache-esm'), servicePlaywright().playwright);
  expect(await made.ready()).toBe(true);
  const results = await runFixture('esm', {
    configFile: 'playwright.config.ts',
    scratchDir: await dir.scratch(),
    codeCache: made.dir,
    tests: [{ file: 'esm.spec.ts', project: 'app', titlePath: ['loads as an ES module'] }],
  });
  expect(results.map((r) => [r.status, r.summary])).toEqual([['passed', 'Passed']]);
});

/** A large module whose export is `body` (a function), padded past the size the hook caches. */
async function largeImporter(root: string, body: string): Promise<string> {
  const padding = Array.from({ length: 3000 }, (_, i) => `function pad${i}() { return ${i}; }`).join('\n');
  const file = path.join(root, 'lib', 'large.js');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `module.exports = ${body};\n${padding}\n`);
  await writeFile(path.join(root, 'lib', 'x.mjs'), "export const hello = 'hi';");
  return file;
}

/** A script that calls the large module's export and prints what it resolved to, with the hook's counts. */
function callAndReport(file: string): string {
  const stats = `require(${JSON.stringify(CODE_CACHE_HOOK)}).stats`;
  return `require(${JSON.stringify(file)})().then((m) => console.log(JSON.stringify({ hello: m.hello, stats: ${stats} })))`;
}

test("a large module that calls import() is compiled from the cache, and its import() resolves from the module's folder", async () => {
  const root = await mkdtemp(path.join(dir.base(), 'import-'));
  const cacheDir = path.join(root, 'cache');
  await mkdir(cacheDir);
  // A message about import() and a method named import stay as they are.
  const file = await largeImporter(
    root,
    "() => { const note = '`import()` takes one argument'; ({ import() {} }).import(); return import('./x.mjs'); }",
  );
  const run = callAndReport(file);
  // From another folder: a specifier resolved from anywhere but the module's own would not be found.
  expect(await withHook(cacheDir, run, true, cacheDir)).toEqual({
    hello: 'hi',
    stats: { accepted: 0, rejected: 0, written: 0 },
  });
  const names = await readdir(cacheDir);
  expect(names.filter((n) => n.endsWith('.v8'))).toHaveLength(1);
  expect(names.filter((n) => n.endsWith('.imports'))).toHaveLength(1);
  expect(await withHook(cacheDir, run, false, cacheDir)).toEqual({
    hello: 'hi',
    stats: { accepted: 1, rejected: 0, written: 0 },
  });

  // The places written beside it no longer those of the import: the cache is not used, the module works.
  const sites = path.join(cacheDir, names.find((n) => n.endsWith('.imports')) ?? '');
  for (const broken of ['[3]', '[]', '"x"', '[1e9]', 'not json']) {
    await writeFile(sites, broken);
    expect(await withHook(cacheDir, run, false, cacheDir)).toEqual({
      hello: 'hi',
      stats: { accepted: 0, rejected: 0, written: 0 },
    });
  }
});

test('a large module that compiles a call of import() at run time (eval, Function) is never cached', async () => {
  const root = await mkdtemp(path.join(dir.base(), 'import-eval-'));
  const cacheDir = path.join(root, 'cache');
  await mkdir(cacheDir);
  const file = await largeImporter(root, "() => eval(`import(${JSON.stringify(require.resolve('./x.mjs'))})`)");
  for (const write of [true, false])
    expect(await withHook(cacheDir, callAndReport(file), write)).toEqual({
      hello: 'hi',
      stats: { accepted: 0, rejected: 0, written: 0 },
    });
  expect(await readdir(cacheDir)).toEqual([]);
});
