/**
 * `pnpm bench visual`: what a `toHaveScreenshot` costs in the service against `playwright test
 * --workers=K` on the same spec, Chromium and machine (the suite with the screenshot and without it,
 * alternating rounds), and whether the same pages compare unchanged across suite runs, worker slots
 * and batch sizes; rewrites the `visual` section of docs/BENCHMARKS.md.
 *
 * Each side keeps its own baselines: the service's made by a first suite run and approved through
 * the API, `playwright test`'s written on disk by a run with `--update-snapshots`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { CHROMIUM_ARGS } from '@testrun/worker';
import { startFixtureSite } from '../../test/fixtures/site';
import { writeSection } from '../report';
import { runTimed } from '../h2h/cpu';
import { HEADLESS_CHROMIUM } from '../h2h/service';
import { reportPhases } from '../playwright/phases';
import { startPlaywrightService, type PlaywrightService } from '../playwright/service';
import { SHOT_STEP, STEADY_TESTS, writeVisualProject } from './project';
import { measureStability } from './stability';
import { visualReport, type CostTrials, type Variant, type VisualTrial } from './report';

const N = Number(process.env.BENCH_VISUAL_TESTS ?? 20);
const ROUNDS = Number(process.env.BENCH_VISUAL_ROUNDS ?? 3);
const K = Number(process.env.BENCH_VISUAL_K ?? 2);
const STEADY_RUNS = Number(process.env.BENCH_VISUAL_STEADY_RUNS ?? 3);
const PROJECT = 'bench-visual';

const out = (line: string) => process.stdout.write(`${line}\n`);

const mean = (values: readonly number[]) =>
  values.length ? values.reduce((sum, v) => sum + v, 0) / values.length : undefined;

/**
 * `playwright test --workers=k --grep grep` in `root` to its end, with the mean of its
 * `toHaveScreenshot` steps; fails unless all `n` tests passed.
 */
async function playwrightTest(
  root: string,
  options: { k: number; grep: string; n: number; cacheDir: string; update?: boolean },
): Promise<VisualTrial> {
  const reportFile = path.join(root, 'report.json');
  const stepsFile = path.join(root, 'steps.json');
  rmSync(reportFile, { force: true });
  rmSync(stepsFile, { force: true });
  const env = {
    ...process.env,
    CHROMIUM_PATH: HEADLESS_CHROMIUM,
    PWTEST_CACHE_DIR: options.cacheDir,
    BENCH_REPORT_FILE: reportFile,
    BENCH_STEPS_FILE: stepsFile,
    BENCH_OUTPUT_DIR: path.join(root, 'test-results'),
  };
  const args = [require.resolve('@playwright/test/cli'), 'test', '-c', 'e2e/playwright.config.ts'];
  args.push(`--workers=${options.k}`, '--grep', options.grep, ...(options.update ? ['--update-snapshots'] : []));
  const began = Date.now();
  const run = await runTimed(`pw-visual-${options.k}`, process.execPath, args, root, env);
  const stats = (JSON.parse(readFileSync(reportFile, 'utf8')) as { stats: { expected: number } }).stats;
  if (run.code !== 0 || stats.expected !== options.n)
    throw new Error(`playwright test: ${stats.expected} of ${options.n} passed (exit ${run.code}):\n${run.output}`);
  const shotStepMs = mean(JSON.parse(readFileSync(stepsFile, 'utf8')) as number[]);
  return { ...run, phases: reportPhases(reportFile, began, began + run.wallMs), shotStepMs };
}

/** A suite run of `variant` in the service, with the mean of its `toHaveScreenshot` steps. */
async function serviceTrial(service: PlaywrightService, variant: Variant): Promise<VisualTrial> {
  const trial = await service.runSuite(PROJECT, variant, N);
  const steps = trial.suiteRunId ? await service.stepDurations(trial.suiteRunId, SHOT_STEP) : [];
  return { ...trial, shotStepMs: mean(steps) };
}

/** The service's first suite run of everything, which makes the baselines; then their approval. */
async function makeBaselines(service: PlaywrightService): Promise<number> {
  const first = await service.startSuite(PROJECT, 'all');
  await first.ended;
  const runs = await service.runsOf(first.id);
  const failed = runs.filter((r) => r.status !== 'passed');
  if (failed.length > 0)
    throw new Error(`the first suite run: ${failed.map((r) => `${r.testName} ${r.outcomeCode}`).join(', ')}`);
  const approved = await service.approveVisual(first.id);
  if (approved !== N + STEADY_TESTS) throw new Error(`approved ${approved} baselines, not ${N + STEADY_TESTS}`);
  return approved;
}

/** CPU milliseconds the whole machine has been busy so far (/proc/stat: every state but idle and iowait). */
function machineBusyMs(): number {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1, 9);
  return fields.reduce((sum, value, i) => (i === 3 || i === 4 ? sum : sum + Number(value)), 0) * 10;
}

/**
 * `ROUNDS` alternating rounds: each side runs the suite with its screenshots and without. Also what
 * share of the machine's cores went to other processes than the trials' meanwhile.
 */
async function measureCost(
  service: PlaywrightService,
  local: string,
  cacheDir: string,
): Promise<{ trials: CostTrials; otherShare: number }> {
  const trials: CostTrials = new Map();
  const [busyBefore, began] = [machineBusyMs(), performance.now()];
  const sides = {
    playwright: (variant: Variant) => playwrightTest(local, { k: K, grep: `@${variant}`, n: N, cacheDir }),
    service: (variant: Variant) => serviceTrial(service, variant),
  };
  for (let round = 0; round < ROUNDS; round++) {
    const variants: Variant[] = round % 2 === 0 ? ['shot', 'plain'] : ['plain', 'shot'];
    const order = round % 2 === 0 ? (['playwright', 'service'] as const) : (['service', 'playwright'] as const);
    for (const variant of variants)
      for (const side of order) {
        const trial = await sides[side](variant);
        const key = `${side}:${variant}`;
        trials.set(key, [...(trials.get(key) ?? []), trial]);
        const step = trial.shotStepMs === undefined ? '' : `, ${trial.shotStepMs.toFixed(0)} ms a screenshot`;
        const test = trial.phases ? `, ${trial.phases.testMs.toFixed(0)} ms a test${step}` : '';
        out(`${key}: ${(trial.wallMs / 1000).toFixed(2)} s wall, ${(trial.cpuMs / 1000).toFixed(1)} CPU-s${test}`);
      }
  }
  const trialsCpu = [...trials.values()].flat().reduce((sum, t) => sum + t.cpuMs, 0);
  const otherShare = (machineBusyMs() - busyBefore - trialsCpu) / ((performance.now() - began) * cpus().length);
  return { trials, otherShare };
}

async function measure(work: string, baseUrl: string) {
  const began = performance.now();
  const serviceRoot = path.join(work, 'service');
  const localRoot = path.join(work, 'local');
  for (const root of [serviceRoot, localRoot]) writeVisualProject(root, { n: N, baseUrl, chromiumArgs: CHROMIUM_ARGS });
  const started = await startPlaywrightService(path.join(serviceRoot, 'testrun.yaml'));
  if ('pending' in started) throw new Error(`the service could not deploy the project: ${started.pending}`);
  const { service } = started;
  try {
    const baselines = await makeBaselines(service);
    out(`approved ${baselines} baselines`);
    await service.useWorker(K, { projectSlug: PROJECT, suiteSlug: 'shot' });
    const cacheDir = path.join(work, 'transform-cache');
    await playwrightTest(localRoot, { k: K, grep: '@shot', n: N, cacheDir, update: true });
    const { trials: cost, otherShare } = await measureCost(service, localRoot, cacheDir);
    out(`other processes than the trials' took ${(otherShare * 100).toFixed(0)}% of the cores meanwhile`);
    const stability = await measureStability(service, STEADY_RUNS, out);
    return { cost, otherShare, stability, minutes: (performance.now() - began) / 60_000 };
  } finally {
    await service.close();
  }
}

/** The command that reproduces this run. */
function command(): string {
  const env = [
    ['BENCH_VISUAL_TESTS', N],
    ['BENCH_VISUAL_ROUNDS', ROUNDS],
    ['BENCH_VISUAL_K', K],
    ['BENCH_VISUAL_STEADY_RUNS', STEADY_RUNS],
  ];
  return `${env.map(([name, value]) => `${name}=${value}`).join(' ')} pnpm bench visual`;
}

/** Entry point of `pnpm bench visual`. */
export async function run(): Promise<void> {
  const site = await startFixtureSite();
  const work = mkdtempSync(path.join(tmpdir(), 'testrun-bench-visual-'));
  try {
    const results = await measure(work, site.url);
    writeSection('visual', visualReport({ ...results, n: N, k: K, rounds: ROUNDS, command: command() }));
    out('wrote the visual section of docs/BENCHMARKS.md');
  } finally {
    await site.close();
    rmSync(work, { recursive: true, force: true });
  }
}
