/**
 * `pnpm bench h2h`: the service against `playwright test` on the same N tests, side by side, and
 * both against the floor (one Chromium, K contexts, no framework); rewrites the `h2h` section of
 * docs/BENCHMARKS.md. Every trial must pass all N tests on every side, or the bench fails.
 *
 * The service is the built API and worker as production runs them (plain node on dist), on a
 * database and Redis prefix of the bench's own; its worker is warm (its browser launched) before
 * the clock starts, as a deployed worker is. `playwright test` is timed from its start to its exit
 * (launching its browsers is part of what a CI job pays).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHROMIUM_ARGS } from '@testrun/worker';
import { REPO_ROOT } from '../../test/support/processes';
import { machineLine, spread, writeSection } from '../report';
import { CpuGroup, runTimed, treeCpuMs } from './cpu';
import { HEADLESS_CHROMIUM, startBenchService } from './service';
import { playwrightConfig, playwrightSpec, projectFile, type EvidenceLevel } from './suite';
import { FORM_DELAY_MS, startFormSite } from './site';

const N = Number(process.env.BENCH_H2H_TESTS ?? 40);
const PAIRS = Number(process.env.BENCH_H2H_PAIRS ?? 3);
const KS = (process.env.BENCH_H2H_K ?? '2,4').split(',').map(Number);
/** Sides measured, in the order of odd rounds (even rounds run them in reverse). */
const SIDES = (process.env.BENCH_H2H_SIDES ?? 'service,pw-none,pw-all,service-all,floor').split(',') as Side[];
/** Sides of `pnpm bench floor`: the service against the floor with each of the service's duties added. */
const FLOOR_SIDES: Side[] = ['service', 'floor', 'floor-proxy', 'floor-trace', 'floor-policy'];

type Side = 'service' | 'service-all' | 'pw-none' | 'pw-all' | 'floor' | FloorVariant;
/** The floor plus what the service must do on every run: the egress proxy, the on-failure trace, or both. */
type FloorVariant = 'floor-proxy' | 'floor-trace' | 'floor-policy';
interface Trial {
  wallMs: number;
  cpuMs: number;
}

const out = (line: string) => process.stdout.write(`${line}\n`);

async function main(mode: 'h2h' | 'floor'): Promise<void> {
  const SIDES_RUN = mode === 'h2h' ? SIDES : FLOOR_SIDES;
  const work = path.join(REPO_ROOT, 'bench', '.h2h');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const site = await startFormSite();
  const bench = await startBenchService('h2h', projectFile(N, site.url));
  const { api, post } = bench;
  // The service's processes (API, worker, and the worker's Chromium and ffmpeg) in one CPU group.
  const serviceGroup = CpuGroup.create(`testrun-h2h-service-${process.pid}`);
  serviceGroup?.add(api.child.pid ?? 0);

  const results = new Map<string, Trial[]>();
  let requeued = 0;
  const record = (k: number, side: Side, trial: Trial) => {
    const name = `${k}:${side}`;
    results.set(name, [...(results.get(name) ?? []), trial]);
    out(`K=${k} ${side}: ${(trial.wallMs / 1000).toFixed(2)} s wall, ${(trial.cpuMs / 1000).toFixed(1)} CPU-s`);
  };

  for (const k of KS) {
    const worker = bench.spawnWorker(k);
    const workerPid = worker.child.pid ?? 0;
    serviceGroup?.add(workerPid);
    // Warm: the worker launches its browser on its first run.
    const warm = await post({ projectSlug: 'h2h', suiteSlug: 'signup' });
    await bench.suiteTerminal(warm);

    const service = async (evidence: EvidenceLevel): Promise<Trial> => {
      const pgBefore = await bench.backendPids();
      const pids = [api.child.pid ?? 0, workerPid];
      const serviceCpu = () => serviceGroup?.usageMs() ?? treeCpuMs(pids);
      const cpuBefore = serviceCpu() + treeCpuMs([], pgBefore);
      const sent = Date.now();
      const body = {
        projectSlug: 'h2h',
        suiteSlug: 'signup',
        ...(evidence === 'all' ? { evidence: { trace: 'on', video: 'on', screenshots: 'on' } } : {}),
      };
      const id = await post(body);
      const row = await bench.suiteTerminal(id);
      const pgAfter = await bench.backendPids();
      const cpuMs = serviceCpu() + treeCpuMs([], [...new Set([...pgBefore, ...pgAfter])]) - cpuBefore;
      if (row.passedCount !== N) throw new Error(`service: ${row.passedCount} of ${N} passed (${row.status})`);
      return { wallMs: row.finishedAt.getTime() - sent, cpuMs };
    };
    const playwright = async (evidence: EvidenceLevel): Promise<Trial> => {
      const dir = path.join(work, `k${k}-${evidence}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'signup.spec.js'), playwrightSpec(N, site.url));
      const reportFile = path.join(dir, 'report.json');
      rmSync(reportFile, { force: true });
      writeFileSync(
        path.join(dir, 'playwright.config.js'),
        playwrightConfig({
          workers: k,
          executablePath: HEADLESS_CHROMIUM,
          args: CHROMIUM_ARGS,
          evidence,
          reportFile,
          outputDir: path.join(dir, 'results'),
        }),
      );
      const cli = require.resolve('@playwright/test/cli');
      const run = await runTimed(`pw-${k}`, process.execPath, [cli, 'test', '-c', 'playwright.config.js'], dir);
      const stats = (
        JSON.parse(readFileSync(reportFile, 'utf8')) as { stats: { expected: number; unexpected: number } }
      ).stats;
      if (run.code !== 0 || stats.expected !== N)
        throw new Error(`playwright test: ${stats.expected} of ${N} passed (exit ${run.code}):\n${run.output}`);
      rmSync(path.join(dir, 'results'), { recursive: true, force: true });
      return run;
    };
    const floor = async (extra: { proxy?: boolean; trace?: boolean } = {}): Promise<Trial> => {
      const args = JSON.stringify({
        n: N,
        workers: k,
        baseUrl: site.url,
        executablePath: HEADLESS_CHROMIUM,
        args: CHROMIUM_ARGS,
        ...extra,
      });
      const script = path.join(__dirname, 'floor.ts');
      const run = await runTimed(`floor-${k}`, process.execPath, ['--import', 'tsx', script, args], REPO_ROOT);
      const line = run.output.split('\n').find((l) => l.startsWith('{'));
      const result = JSON.parse(line ?? 'null') as { wallMs: number; cpuMs: number; passed: number } | null;
      if (run.code !== 0 || !result || result.passed !== N) throw new Error(`floor failed:\n${run.output}`);
      return result;
    };
    const sides: Record<Side, () => Promise<Trial>> = {
      service: () => service('none'),
      'service-all': () => service('all'),
      'pw-none': () => playwright('none'),
      'pw-all': () => playwright('all'),
      floor: () => floor(),
      'floor-proxy': () => floor({ proxy: true }),
      'floor-trace': () => floor({ trace: true }),
      'floor-policy': () => floor({ proxy: true, trace: true }),
    };
    for (let round = 0; round < PAIRS; round++) {
      const order = round % 2 === 0 ? SIDES_RUN : [...SIDES_RUN].reverse();
      for (const side of order) record(k, side, await sides[side]());
    }
    worker.child.kill('SIGTERM');
    await worker.exited;
    requeued += reconcilerRequeues(worker.output());
  }

  await bench.close();
  await serviceGroup?.remove();
  await site.close();
  rmSync(work, { recursive: true, force: true });
  const serviceRuns = KS.length * (PAIRS * SIDES_RUN.filter((side) => side.startsWith('service')).length + 1) * N;
  if (mode === 'h2h') writeSection('h2h', report(results, { requeued, serviceRuns }));
  else writeSection('floor', floorReport(results));
  out(`wrote the ${mode} section of docs/BENCHMARKS.md`);
}

/** Ratios of side A to side B over the rounds (round i of A against round i of B). */
function ratios(a: readonly Trial[], b: readonly Trial[], of: keyof Trial): number[] {
  return a.flatMap((trial, i) => {
    const other = b[i];
    return other ? [trial[of] / other[of]] : [];
  });
}

/** Jobs the reconciler added again, from the worker's log (one warn line per pass that settled runs). */
function reconcilerRequeues(log: string): number {
  let total = 0;
  for (const line of log.split('\n')) {
    if (!line.includes('reconciler settled runs')) continue;
    const match = /"requeued":(\d+)/.exec(line);
    total += Number(match?.[1] ?? 0);
  }
  return total;
}

/** Median (min–max) of values divided by scale, or a dash for none. */
function fmt(values: number[], digits: number, scale = 1): string {
  if (values.length === 0) return '–';
  const { median, min, max } = spread(values.map((v) => v / scale));
  return `${median.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
}

/** The per-side rows and the ratio rows of a report, for the sides measured. */
function tables(
  results: Map<string, Trial[]>,
  sides: readonly Side[],
  pairs: readonly [Side, Side, string][],
): { rows: string; ratioRows: string } {
  const rows: string[] = [];
  const ratioRows: string[] = [];
  for (const k of KS) {
    const get = (side: Side) => results.get(`${k}:${side}`) ?? [];
    for (const side of sides) {
      const trials = get(side);
      rows.push(
        `| ${k} | ${side} | ${fmt(
          trials.map((t) => t.wallMs),
          1,
          1000,
        )} | ${fmt(
          trials.map((t) => t.cpuMs / N),
          0,
        )} |`,
      );
    }
    for (const [a, b, target] of pairs) {
      if (get(a).length === 0 || get(b).length === 0) continue;
      const wall = fmt(ratios(get(a), get(b), 'wallMs'), 2);
      ratioRows.push(`| ${k} | ${a} / ${b} | ${wall} | ${fmt(ratios(get(a), get(b), 'cpuMs'), 2)} | ${target} |`);
    }
  }
  return { rows: rows.join('\n'), ratioRows: ratioRows.join('\n') };
}

function report(results: Map<string, Trial[]>, reconciler: { requeued: number; serviceRuns: number }): string {
  const { rows, ratioRows } = tables(results, SIDES, [
    ['service', 'pw-none', 'wall ≤ 0.90'],
    ['service-all', 'pw-all', 'wall ≤ 0.90, CPU ≤ 1.10'],
    ['service', 'floor', 'wall ≤ 1.15'],
  ]);
  return `## Head to head: the service against \`playwright test\`

\`pnpm bench h2h\` (\`bench/h2h/\`; \`BENCH_H2H_TESTS\`, \`BENCH_H2H_PAIRS\`, \`BENCH_H2H_K\`, \`BENCH_H2H_SIDES\` change the run).

- ${machineLine()}; measured ${new Date().toISOString().slice(0, 10)} on a machine other processes shared.
- ${N} tests, each: open a sign-up form (a stylesheet and a script fetched separately), fill a name, click
  submit, check the text the page shows after a ${FORM_DELAY_MS} ms client-side delay. The same tests as a Testrun
  project (\`bench/h2h/suite.ts\`) and as a Playwright spec run by \`@playwright/test\` at the project's
  Playwright version, same Chromium binary and launch flags as the worker.
- Sides: **service** = the built API and worker (WORKER_CONCURRENCY=K, browser warm), a suite run POSTed and
  followed to its end, at the service's default evidence policy; **service-all** = the same with
  \`evidence: { trace: 'on', video: 'on', screenshots: 'on' }\`; **pw-none** = \`playwright test --workers=K\`
  with trace, video and screenshot off; **pw-all** = with all three \`on\`; **floor** = one warm Chromium,
  K contexts at a time, the tests written against Playwright's API directly.
- Wall time: service from the POST to the suite run's \`finished_at\`; \`playwright test\` from spawn to exit;
  floor the tests alone. CPU: the processes of each side and all their children (worker, Chromium, ffmpeg,
  API and the Postgres backends of the bench database for the service; \`playwright test\`, its workers and
  browsers for Playwright), read from /proc or the shell's \`times\`.
- ${PAIRS} rounds per K; the sides alternate their order between rounds; every trial checks that all ${N} tests passed.
  Figures: median (min–max).

| K | Side | Wall (s) | CPU per test (ms) |
|---|---|---|---|
${rows}

| K | Ratio | Wall | CPU | Target |
|---|---|---|---|---|
${ratioRows}

Jobs the reconciler added again while the service ran ${reconciler.serviceRuns} runs: ${reconciler.requeued}
(a run finished between the reconciler's read of it and its read of the job used to get a new job;
it reads the runs again after the job states now).
`;
}

function floorReport(results: Map<string, Trial[]>): string {
  const { rows, ratioRows } = tables(results, FLOOR_SIDES, [
    ['floor-proxy', 'floor', 'the egress proxy'],
    ['floor-trace', 'floor', 'the on-failure trace'],
    ['floor-policy', 'floor', 'both'],
    ['service', 'floor-policy', 'the service beyond its duties'],
    ['service', 'floor', 'wall ≤ 1.15'],
  ]);
  return `## Where the gap to the floor goes

\`pnpm bench floor\` (\`bench/h2h/\`, the head-to-head's tests, site and service; \`BENCH_H2H_TESTS\`, \`BENCH_H2H_PAIRS\`, \`BENCH_H2H_K\`).

- ${machineLine()}; measured ${new Date().toISOString().slice(0, 10)} on a machine other processes shared.
- The floor (one warm Chromium, K contexts, the tests against Playwright's API) with what the service
  must do on every run added one at a time: **floor-proxy** sends every request of each context through
  the worker's own egress proxy (\`EgressProxy\`, the network policy that keeps runs off the deployment's
  network), **floor-trace** records each test's trace as the default \`on-failure\` policy does (DOM
  snapshots, no screencast) and drops it when the test passes, **floor-policy** does both. **service** is
  the built API and worker at the default evidence policy, as in the head-to-head.
- ${PAIRS} rounds per K, sides alternating their order; every trial checks that all ${N} tests passed.
  Figures: median (min–max).

| K | Side | Wall (s) | CPU per test (ms) |
|---|---|---|---|
${rows}

| K | Ratio | Wall | CPU | What it measures |
|---|---|---|---|---|
${ratioRows}
`;
}

/** Entry point of `pnpm bench h2h`. */
export async function run(): Promise<void> {
  await main('h2h');
}

/** Entry point of `pnpm bench floor`: where the gap between the service and the floor goes. */
export async function runFloorGap(): Promise<void> {
  await main('floor');
}
