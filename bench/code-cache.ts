/**
 * `pnpm bench code-cache`: what the worker's code cache of Playwright's modules saves each process of
 * a sandbox (docs/PLAYWRIGHT.md, "Batches"): CPU of a fresh Node process loading the modules a
 * Playwright runner and its workers load (`@playwright/test`, the test loader, Babel, expect),
 * with the cache's hook and without it, in alternating rounds. Rewrites the `code-cache` section of
 * docs/BENCHMARKS.md.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CODE_CACHE_HOOK, CodeCache } from '../apps/worker/src/executors/playwright/caches/code-cache';
import { servicePlaywright } from '../apps/worker/src/executors/playwright/runner/versions';
import { machineLine, spread, writeSection } from './report';

const ROUNDS = Number(process.env.BENCH_CODE_CACHE_ROUNDS ?? 10);
const exec = promisify(execFile);
const out = (line: string) => process.stdout.write(`${line}\n`);

/** The script each process runs: loads the modules, prints its CPU meanwhile (ms) and the hook's counts. */
function loadScript(playwrightDir: string): string {
  const modules = ['lib/index.js', 'lib/common/index.js', 'lib/transform/babelBundle.js', 'lib/matchers/expect.js'];
  return [
    'const start = process.cpuUsage();',
    ...modules.map((m) => `require(${JSON.stringify(path.join(playwrightDir, m))});`),
    'const used = process.cpuUsage(start);',
    "const hook = Object.keys(require.cache).find((name) => name.endsWith('/inside/code-cache.js'));",
    'console.log(JSON.stringify({ ms: (used.user + used.system) / 1000, stats: hook ? require.cache[hook].exports.stats : null }));',
  ].join('\n');
}

interface Sample {
  ms: number;
  stats: { accepted: number; rejected: number } | null;
}

async function load(script: string, cacheDir: string | null): Promise<Sample> {
  const args = cacheDir ? ['--require', CODE_CACHE_HOOK, '-e', script] : ['-e', script];
  const env = cacheDir ? { PATH: process.env.PATH, TESTRUN_CODE_CACHE_DIR: cacheDir } : { PATH: process.env.PATH };
  const { stdout } = await exec(process.execPath, args, { env });
  return JSON.parse(stdout) as Sample;
}

export async function run(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'testrun-bench-code-cache-'));
  try {
    const playwrightDir = servicePlaywright().playwright;
    const cache = await CodeCache.create(path.join(root, 'cache'), playwrightDir);
    if (!(await cache.ready())) throw new Error('the code cache could not be made');
    const script = loadScript(playwrightDir);
    const withCache: number[] = [];
    const without: number[] = [];
    let accepted = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating, the first of each round switching, so drift spreads over both.
      const order = round % 2 === 0 ? [true, false] : [false, true];
      for (const cached of order) {
        const sample = await load(script, cached ? cache.dir : null);
        (cached ? withCache : without).push(sample.ms);
        if (cached) accepted = sample.stats?.accepted ?? 0;
        out(`round ${round + 1} ${cached ? 'cache   ' : 'no cache'} ${sample.ms.toFixed(0)} ms`);
      }
    }
    const a = spread(withCache);
    const b = spread(without);
    const ratios = spread(withCache.map((ms, i) => ms / (without[i] ?? ms)));
    const f = (s: { median: number; min: number; max: number }) =>
      `${s.median.toFixed(0)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)})`;
    writeSection(
      'code-cache',
      `## The code cache of Playwright's modules

\`pnpm bench code-cache\` (\`bench/code-cache.ts\`; \`BENCH_CODE_CACHE_ROUNDS\`, default 10).

- ${machineLine()}; measured ${new Date().toISOString().slice(0, 10)}.
- CPU (user + system) of a fresh Node process while it requires what a Playwright runner and each
  of its workers load first (\`playwright/lib/index.js\`, the test loader \`lib/common/index.js\`,
  the Babel and expect bundles), with the worker's cache and its hook (\`--require\`) and without;
  ${ROUNDS} alternating rounds, median (min–max). The hook compiled ${accepted} modules from the cache.

| | CPU to load |
|---|---|
| with the code cache | ${f(a)} |
| without | ${f(b)} |
| ratio, round by round | ${ratios.median.toFixed(2)} (${ratios.min.toFixed(2)}–${ratios.max.toFixed(2)}) |
`,
    );
    out('wrote the code-cache section of docs/BENCHMARKS.md');
  } finally {
    // The cache's mark (cache.made) is beside it, in the same folder.
    await rm(root, { recursive: true, force: true });
  }
}
