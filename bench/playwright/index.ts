/**
 * `pnpm bench playwright`: a team's Playwright tests, run by the service and by
 * `playwright test --workers=K` on the same machine, Chromium and fixture shop, and a 100-spec
 * project deployed end to end; rewrites the `playwright` section of docs/BENCHMARKS.md.
 *
 * The `playwright test` side runs in a CPU control group of its own (Chromium's helpers outlive
 * their parent, so /proc readings under-count). The service's side is bench/playwright/service.ts;
 * while the service cannot deploy a Playwright project yet, its rows read "pending" and why.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { CHROMIUM_ARGS } from '@testrun/worker';
import { startFixtureSite } from '../../test/fixtures/site';
import { machineLine, spread, writeSection } from '../report';
import { runTimed } from '../h2h/cpu';
import { HEADLESS_CHROMIUM } from '../h2h/service';
import { writeLargeProject, writeShopSuite } from './project';
import { startPlaywrightService, type PlaywrightService, type Trial } from './service';
import { reportPhases } from './phases';
import { extrasReport, measureAB, measureBatch1, pairedRatios } from './extras';

const N = Number(process.env.BENCH_PW_TESTS ?? 40);
const PAIRS = Number(process.env.BENCH_PW_PAIRS ?? 3);
const KS = (process.env.BENCH_PW_K ?? '2,4').split(',').map(Number);
const SPECS = Number(process.env.BENCH_PW_SPECS ?? 100);
const DEPLOYS = Number(process.env.BENCH_PW_DEPLOYS ?? 3);
const BATCH1 = Number(process.env.BENCH_PW_BATCH1 ?? 1);
const NOSANDBOX = Number(process.env.BENCH_PW_NOSANDBOX ?? 2);
const CODECACHE = Number(process.env.BENCH_PW_CODECACHE ?? 2);

const out = (line: string) => process.stdout.write(`${line}\n`);
const cliPath = () => require.resolve('@playwright/test/cli');

/** `playwright test --workers=K` in `root` to its end; fails unless all `n` tests passed. */
async function playwrightTest(root: string, k: number, n: number, cacheDir: string): Promise<Trial> {
  const reportFile = path.join(root, 'report.json');
  rmSync(reportFile, { force: true });
  const env = {
    ...process.env,
    CHROMIUM_PATH: HEADLESS_CHROMIUM,
    PWTEST_CACHE_DIR: cacheDir,
    BENCH_REPORT_FILE: reportFile,
    BENCH_OUTPUT_DIR: path.join(root, 'test-results'),
  };
  const args = [cliPath(), 'test', '-c', 'e2e/playwright.config.ts', `--workers=${k}`];
  const began = Date.now();
  const run = await runTimed(`pw-${k}`, process.execPath, args, root, env);
  const stats = (JSON.parse(readFileSync(reportFile, 'utf8')) as { stats: { expected: number } }).stats;
  if (run.code !== 0 || stats.expected !== n)
    throw new Error(`playwright test: ${stats.expected} of ${n} passed (exit ${run.code}):\n${run.output}`);
  return { ...run, phases: reportPhases(reportFile, began, began + run.wallMs) };
}

/**
 * `playwright test --list` of `root`: what listing the tests costs locally, the floor of discovery.
 * Playwright keeps the TypeScript it compiled in `cacheDir` (PWTEST_CACHE_DIR): a new directory is a
 * cold start, as in a fresh sandbox; the same one again is warm.
 */
async function playwrightList(root: string, cacheDir: string): Promise<{ wallMs: number; tests: number }> {
  const args = [cliPath(), 'test', '-c', 'e2e/playwright.config.ts', '--list'];
  const run = await runTimed('pw-list', process.execPath, args, root, { ...process.env, PWTEST_CACHE_DIR: cacheDir });
  const total = /Total: (\d+) tests?/.exec(run.output);
  if (run.code !== 0 || !total) throw new Error(`playwright test --list failed:\n${run.output}`);
  return { wallMs: run.wallMs, tests: Number(total[1]) };
}

/** Median (min–max), or "pending". */
function fmt(values: readonly number[], digits: number, scale = 1): string {
  if (values.length === 0) return 'pending';
  const { median, min, max } = spread(values.map((v) => v / scale));
  return `${median.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
}

interface Results {
  trials: Map<string, Trial[]>;
  listCold: number[];
  listWarm: number[];
  listedTests: number;
  /** One-minute load average before and after: how busy the shared machine was. */
  load: [number, number];
  deploys: number[];
  pending: string | null;
}

async function measure(work: string, baseUrl: string): Promise<Results> {
  const results: Results = {
    trials: new Map(),
    listCold: [],
    listWarm: [],
    listedTests: 0,
    deploys: [],
    pending: null,
    load: [loadavg()[0] ?? 0, 0],
  };
  const record = (k: number, side: string, trial: Trial) => {
    const key = `${k}:${side}`;
    results.trials.set(key, [...(results.trials.get(key) ?? []), trial]);
    const phases = trial.phases
      ? `, phases ${[trial.phases.headMs, trial.phases.bodyMs, trial.phases.endMs].map((ms) => (ms / 1000).toFixed(2)).join(' / ')} s, ${trial.phases.testMs.toFixed(0)} ms a test`
      : '';
    const extra =
      trial.sandboxPeaks === undefined
        ? phases
        : `${phases}, sandbox peaks ${(trial.sandboxPeaks ?? []).map((p) => `${(p / 2 ** 20).toFixed(0)} MiB`).join(' ')}, sandboxes gone ${trial.tailMs} ms after the verdict, ${trial.statements} worker statements`;
    out(`K=${k} ${side}: ${(trial.wallMs / 1000).toFixed(2)} s wall, ${(trial.cpuMs / 1000).toFixed(1)} CPU-s${extra}`);
  };
  const suite = path.join(work, 'shop');
  writeShopSuite(suite, { n: N, baseUrl, chromiumArgs: CHROMIUM_ARGS });
  const large = path.join(work, 'large');
  writeLargeProject(large, { specs: SPECS, baseUrl, chromiumArgs: CHROMIUM_ARGS });

  const started = await startPlaywrightService(path.join(suite, 'testrun.yaml'));
  const service: PlaywrightService | null = 'service' in started ? started.service : null;
  if ('pending' in started) results.pending = started.pending.replaceAll(`${work}/`, '');
  // Both sides steady: the service's worker is warm, and Playwright's compiled TypeScript is cached.
  const shopCache = path.join(work, 'transform-cache-shop');
  await playwrightList(suite, shopCache);
  try {
    for (const k of KS) {
      await service?.useWorker(k, { projectSlug: 'bench-pw', suiteSlug: 'all' });
      const sides: Record<string, (() => Promise<Trial>) | null> = {
        service: service ? () => service.runSuite('bench-pw', 'all', N) : null,
        playwright: () => playwrightTest(suite, k, N, shopCache),
      };
      for (let round = 0; round < PAIRS; round++) {
        const order = round % 2 === 0 ? ['playwright', 'service'] : ['service', 'playwright'];
        for (const side of order) {
          const trial = sides[side];
          if (trial) record(k, side, await trial());
        }
      }
    }
    for (let round = 0; round < DEPLOYS; round++) {
      const cacheDir = path.join(work, `transform-cache-${round}`);
      const cold = await playwrightList(large, cacheDir);
      const warm = await playwrightList(large, cacheDir);
      results.listCold.push(cold.wallMs);
      results.listWarm.push(warm.wallMs);
      results.listedTests = cold.tests;
      out(
        `playwright test --list, ${SPECS} specs: ${(cold.wallMs / 1000).toFixed(2)} s cold, ${(warm.wallMs / 1000).toFixed(2)} s warm`,
      );
      if (!service) continue;
      // A changed spec each round, so each deploy packs, uploads and discovers a new bundle.
      appendFileSync(path.join(large, 'e2e/tests/catalog/catalog-000.spec.ts'), `// round ${round}\n`);
      const deployed = await service.deploy(path.join(large, 'testrun.yaml'));
      results.deploys.push(deployed.wallMs);
      out(`testrun deploy, ${SPECS} specs: ${(deployed.wallMs / 1000).toFixed(2)} s`);
    }
    for (const [which, rounds] of [
      ['sandbox', NOSANDBOX],
      ['codeCache', CODECACHE],
    ] as const)
      if (service)
        await measureAB(which, service, rounds, N, (side, trial) => record(2, side, trial)).catch((error: unknown) =>
          out(`the ${which} A/B: not measured (${error instanceof Error ? error.message : String(error)})`),
        );
    // The last and dearest figure: when it fails, the others are still written.
    if (service)
      await measureBatch1(service, BATCH1, N, (side, trial) => record(2, side, trial)).catch((error: unknown) =>
        out(`one sandbox per test: not measured (${error instanceof Error ? error.message : String(error)})`),
      );
  } finally {
    await service?.close();
  }
  results.load[1] = loadavg()[0] ?? 0;
  return results;
}

/** "met" or "missed" by the median, or "–" with nothing measured. */
function verdict(values: readonly number[], limit: number): string {
  if (values.length === 0) return '–';
  return spread(values).median <= limit ? 'met' : 'missed';
}

/** The command that reproduces this run. */
function command(): string {
  const env = [
    ['BENCH_PW_TESTS', N],
    ['BENCH_PW_PAIRS', PAIRS],
    ['BENCH_PW_K', KS.join(',')],
    ['BENCH_PW_SPECS', SPECS],
    ['BENCH_PW_DEPLOYS', DEPLOYS],
    ['BENCH_PW_BATCH1', BATCH1],
    ['BENCH_PW_NOSANDBOX', NOSANDBOX],
    ['BENCH_PW_CODECACHE', CODECACHE],
  ];
  return `${env.map(([name, value]) => `${name}=${value}`).join(' ')} pnpm bench playwright`;
}

function ratioRow(k: number, results: Results, of: 'wallMs' | 'cpuMs', target: number, label: string): string {
  const a = results.trials.get(`${k}:service`) ?? [];
  const b = results.trials.get(`${k}:playwright`) ?? [];
  const ratios = pairedRatios(a, b, of);
  const what = of === 'wallMs' ? 'wall' : 'CPU';
  // Three digits: a median a hair over the target reads as such, not as the target itself.
  return `| ${k} | service / playwright test, ${what} | ${fmt(ratios, 3)} | ${label} | ${verdict(ratios, target)} |`;
}

function report(results: Results): string {
  const rows: string[] = [];
  const ratios: string[] = [];
  for (const k of KS) {
    for (const side of ['playwright', 'service']) {
      const trials = results.trials.get(`${k}:${side}`) ?? [];
      const label =
        side === 'playwright' ? `\`playwright test --workers=${k}\`` : `service (WORKER_CONCURRENCY=${k}, warm)`;
      rows.push(
        `| ${k} | ${label} | ${fmt(
          trials.map((t) => t.wallMs),
          1,
          1000,
        )} | ${fmt(
          trials.map((t) => t.cpuMs / N),
          0,
        )} |`,
      );
    }
    ratios.push(ratioRow(k, results, 'wallMs', 1.0, '≤ 1.0 (goal 0.9)'), ratioRow(k, results, 'cpuMs', 1.1, '≤ 1.1'));
  }
  const pending = results.pending
    ? `\nService rows are pending: the service does not deploy a Playwright project yet (\`testrun deploy\` said: "${results.pending.replace(/\|/g, '\\|')}").\n`
    : '';
  return `## Playwright tests

\`pnpm bench playwright\` (\`bench/playwright/\`; \`BENCH_PW_TESTS\`, \`BENCH_PW_PAIRS\`, \`BENCH_PW_K\`, \`BENCH_PW_SPECS\`, \`BENCH_PW_DEPLOYS\`, \`BENCH_PW_BATCH1\`, \`BENCH_PW_NOSANDBOX\`, \`BENCH_PW_CODECACHE\` change the run). These figures:
\`${command()}\`.

- ${machineLine()}; measured ${new Date().toISOString().slice(0, 10)} on a machine other processes shared
  (load average ${results.load[0].toFixed(1)} at the start, ${results.load[1].toFixed(1)} at the end: figures are indicative).
- ${N} tests in one TypeScript spec against the fixture shop's catalog (\`bench/playwright/project.ts\`): open
  the catalog or a product page, search, click a link or "Add to cart", expect the heading, price, status
  or cart total (each click answers after 150 ms, as a page waiting on its API does). Config: Chromium at
  \`${HEADLESS_CHROMIUM}\` with the worker's launch flags, \`fullyParallel\`, no retries, trace, video and screenshot off.
- **playwright test**: \`node node_modules/@playwright/test/cli.js test -c e2e/playwright.config.ts --workers=K\`
  (\`npx playwright test --workers=K\`), its compiled-TypeScript cache warm (one \`--list\` before the rounds),
  timed from spawn to exit, its CPU from a cgroup v1 \`cpuacct\` group
  of its own (\`cpuacct.usage\`: every process it starts, Chromium's orphaned helpers included).
  **service**: the same project deployed with \`testrun deploy --file testrun.yaml\`, its suite POSTed to
  \`/api/v1/runs\` with the same evidence (\`evidence\`: trace, video and screenshots \`off\`) and followed to its
  verdict (wall); CPU of the API, the worker and its sandboxes, and the Postgres backends, until its last
  sandbox is gone (the runner's shut-down after the last result included, as on the other side).
- ${PAIRS} rounds per K, the two sides alternating which goes first. Figures: median (min–max)${
    PAIRS % 2 === 0 ? '; with an even count the median is the mean of the two middle values' : ''
  }.

| K | Side | Wall (s) | CPU per test (ms) |
|---|---|---|---|
${rows.join('\n')}

| K | Ratio | Figure | Target | Met |
|---|---|---|---|---|
${ratios.join('\n')}

Deploying a ${SPECS}-spec project (${results.listedTests} tests with its setup test: page object, fixture, JSON data,
a setup project, an npm helper package) end to end, \`testrun deploy --file testrun.yaml\` from start to exit
(pack, upload, discovery in the sandbox), a spec changed before each of ${DEPLOYS} deploys so each bundle is new;
beside it \`playwright test --list\` of the same project on this machine, what listing alone costs:

| What | Wall (s) | Target | Met |
|---|---|---|---|
| \`playwright test --list\` (local, no sandbox), compile cache cold | ${fmt(results.listCold, 2, 1000)} | – | |
| \`playwright test --list\`, compile cache warm | ${fmt(results.listWarm, 2, 1000)} | – | |
| \`testrun deploy\` end to end | ${fmt(results.deploys, 2, 1000)} | ≤ 5 | ${verdict(results.deploys, 5_000)} |

Playwright compiles a project's TypeScript when it first loads it and caches the result
(\`PLAYWRIGHT_TRANSFORM_CACHE_DIR\`): the worker keeps that cache per bundle and seeds each sandbox with it
(docs/PLAYWRIGHT.md, "Batches"), so only the first sandbox of a bundle on a worker pays the cold figure.
${pending}
${extrasReport(results.trials, KS, N)}`;
}

/** Entry point of `pnpm bench playwright`. */
export async function run(): Promise<void> {
  const site = await startFixtureSite();
  const work = mkdtempSync(path.join(tmpdir(), 'testrun-bench-pw-'));
  try {
    const results = await measure(work, site.url);
    writeSection('playwright', report(results));
    out('wrote the playwright section of docs/BENCHMARKS.md');
  } finally {
    await site.close();
    rmSync(work, { recursive: true, force: true });
  }
}
