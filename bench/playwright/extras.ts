/**
 * The service-side figures of `pnpm bench playwright` beside the head-to-head: POST to the first test
 * started, the peak memory of each sandbox, what batching saves against one sandbox per test
 * (PLAYWRIGHT_BATCH_SIZE=1) at K=2, and what the sandbox itself costs (PLAYWRIGHT_SANDBOX=off) at K=2.
 */
import { spread } from '../report';
import type { PlaywrightService, Trial } from './service';

/** Where the K=2 trials with one sandbox per test are kept in the results' trials. */
const BATCH1_SIDE = 'service-batch1';

/** Median (min–max), or "not measured". */
function fmt(values: readonly number[], digits: number, scale = 1): string {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return 'not measured';
  const { median, min, max } = spread(finite.map((v) => v / scale));
  return `${median.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
}

/** `f` of `a[i]` and `b[i]`, for each round both sides measured (and `f` could compare). */
function paired(a: readonly Trial[], b: readonly Trial[], f: (x: Trial, y: Trial) => number | undefined): number[] {
  return a.flatMap((t, i) => {
    const other = b[i];
    const value = other && f(t, other);
    return value === undefined ? [] : [value];
  });
}

/** `a[i]`'s figure over `b[i]`'s, for each round both sides measured. */
export function pairedRatios(a: readonly Trial[], b: readonly Trial[], of: 'wallMs' | 'cpuMs'): number[] {
  return paired(a, b, (x, y) => x[of] / y[of]);
}

/** A table row's cells of `list`: its trials, their wall time (s) and CPU per test (ms). */
function trialCells(list: readonly Trial[], n: number): string {
  return `${list.length} | ${fmt(
    list.map((t) => t.wallMs),
    1,
    1000,
  )} | ${fmt(
    list.map((t) => t.cpuMs / n),
    0,
  )}`;
}

/**
 * `trials` runs of the suite by a warm worker of 2 slots that runs every test in a sandbox of its own
 * (warmed by one run of a single test, not of the whole suite: that alone would cost one trial).
 */
export async function measureBatch1(
  service: PlaywrightService,
  trials: number,
  n: number,
  record: (side: string, trial: Trial) => void,
): Promise<void> {
  if (trials < 1) return;
  await service.useWorker(
    2,
    { projectSlug: 'bench-pw', suiteSlug: 'all', oneTest: true },
    { PLAYWRIGHT_BATCH_SIZE: '1' },
  );
  for (let i = 0; i < trials; i++) record(BATCH1_SIDE, await service.runSuite('bench-pw', 'all', n));
}

/** A worker variant of an A/B at K=2: its trials' key in the results, its label, its environment. */
interface Variant {
  side: string;
  label: string;
  /** Its name in the ratio row. */
  short: string;
  env: Record<string, string>;
}

/** The A/Bs against the default worker: what the sandbox costs, and what the code cache saves. */
const AB = {
  sandbox: [
    { side: 'ab-sandbox', label: 'sandboxed (the default)', short: 'sandboxed', env: {} },
    { side: 'ab-nosandbox', label: '`PLAYWRIGHT_SANDBOX=off`', short: 'off', env: { PLAYWRIGHT_SANDBOX: 'off' } },
  ],
  codeCache: [
    { side: 'ab-codecache', label: 'code cache (the default)', short: 'code cache', env: {} },
    {
      side: 'ab-nocodecache',
      label: '`PLAYWRIGHT_CODE_CACHE=off`',
      short: 'off',
      env: { PLAYWRIGHT_CODE_CACHE: 'off' },
    },
  ],
} satisfies Record<string, [Variant, Variant]>;

/**
 * `rounds` alternating pairs at K=2 of the A/B `which` (the default worker against a variant),
 * each a fresh worker warmed by one run of the suite.
 */
export async function measureAB(
  which: keyof typeof AB,
  service: PlaywrightService,
  rounds: number,
  n: number,
  record: (side: string, trial: Trial) => void,
): Promise<void> {
  const warm = { projectSlug: 'bench-pw', suiteSlug: 'all' };
  const sides = AB[which];
  for (let round = 0; round < rounds; round++) {
    for (const { side, env } of round % 2 === 0 ? sides : [...sides].reverse()) {
      await service.useWorker(2, warm, env);
      record(side, await service.runSuite('bench-pw', 'all', n));
    }
  }
}

/** The table of an A/B's trials, with the ratios of each round's pair. */
function abTable(trials: ReadonlyMap<string, Trial[]>, n: number, [a, b]: [Variant, Variant]): string {
  const on = trials.get(`2:${a.side}`) ?? [];
  const off = trials.get(`2:${b.side}`) ?? [];
  const ratios = (of: 'wallMs' | 'cpuMs') => pairedRatios(on, off, of);
  const row = (label: string, list: readonly Trial[]) => `| ${label} | ${trialCells(list, n)} |`;
  return `| Worker | Trials | Wall (s) | CPU per test (ms) |
|---|---|---|---|
${row(a.label, on)}
${row(b.label, off)}
| ${a.short} / ${b.short}, paired by round | ${Math.min(on.length, off.length)} | ${fmt(ratios('wallMs'), 3)} | ${fmt(ratios('cpuMs'), 3)} |
`;
}

/** The two A/B tables: the sandbox's cost, and the code cache's saving. */
function abReport(trials: ReadonlyMap<string, Trial[]>, n: number): string {
  return `What the sandbox costs a suite run, K=2, the same ${n} tests: alternating pairs of a worker that
sandboxes its Playwright runs and one with \`PLAYWRIGHT_SANDBOX=off\` (the same runner, egress proxy and
batches, without namespaces, cgroups, the scratch tmpfs and the relay), each a fresh worker warmed by one
run of the suite:

${abTable(trials, n, AB.sandbox)}
What the code cache of Playwright's modules saves (docs/PLAYWRIGHT.md, "Batches"), K=2, the same ${n}
tests: alternating pairs of a worker with it and one with \`PLAYWRIGHT_CODE_CACHE=off\`, each a fresh
worker warmed by one run of the suite (which makes the cache):

${abTable(trials, n, AB.codeCache)}`;
}

/**
 * Where the wall time of the head-to-head's trials went, each side's median of each phase (phases.ts)
 * and the service's minus playwright test's, paired by round.
 */
function phasesReport(trials: ReadonlyMap<string, Trial[]>, ks: readonly number[]): string {
  // Seconds, but a test's own duration in milliseconds.
  const columns = [
    ['headMs', 2, 1000],
    ['bodyMs', 2, 1000],
    ['endMs', 2, 1000],
    ['testMs', 0, 1],
  ] as const;
  const rows = ks.flatMap((k) => {
    const service = trials.get(`${k}:service`) ?? [];
    const local = trials.get(`${k}:playwright`) ?? [];
    const cells = (list: readonly Trial[]) =>
      columns.map(([p, digits, scale]) =>
        fmt(
          list.map((t) => t.phases?.[p] ?? NaN),
          digits,
          scale,
        ),
      );
    const gaps = columns.map(([p, digits, scale]) =>
      fmt(
        paired(service, local, (x, y) => (x.phases && y.phases ? x.phases[p] - y.phases[p] : undefined)),
        digits,
        scale,
      ),
    );
    return [
      `| ${k} | \`playwright test\` | ${cells(local).join(' | ')} |`,
      `| ${k} | service | ${cells(service).join(' | ')} |`,
      `| ${k} | service − playwright test, paired | ${gaps.join(' | ')} |`,
    ];
  });
  return `Where the wall time goes, both sides alike: the start (the spawn of \`playwright test\`, or the POST) to
the first test's start, the first test's start to the last test's end, and that to the end (the exit, or
the suite run's verdict); and a test's own duration, the mean over the trial's tests. \`playwright test\`'s
test times are its JSON report's, the service's its steps' (a test's first step starts as the test does,
its last ends as it ends):

| K | Side | Start → first test (s) | First test → last test's end (s) | Last test's end → end (s) | A test (ms) |
|---|---|---|---|---|---|
${rows.join('\n')}
`;
}

/** The section's tables of the service's own figures, from the trials by `k:side`. */
export function extrasReport(trials: ReadonlyMap<string, Trial[]>, ks: readonly number[], n: number): string {
  const rows: string[] = [];
  for (const k of ks) {
    const service = trials.get(`${k}:service`) ?? [];
    const peaks = service.flatMap((t) => t.sandboxPeaks ?? []);
    const perTrial = service.map((t) => t.sandboxPeaks?.length ?? NaN);
    rows.push(
      `| ${k} | ${fmt(
        service.map((t) => t.phases?.headMs ?? NaN),
        0,
      )} | ${fmt(perTrial, 0)} | ${fmt(peaks, 0, 1024 * 1024)} | ${fmt(
        service.map((t) => t.tailMs ?? NaN),
        0,
      )} | ${fmt(
        service.map((t) => (t.statements ?? NaN) / n),
        1,
      )} |`,
    );
  }
  const batched = trials.get('2:service') ?? [];
  const alone = trials.get(`2:${BATCH1_SIDE}`) ?? [];
  const batchRow = (label: string, list: readonly Trial[]) =>
    `| ${label} | ${trialCells(list, n)} | ${fmt(
      list.map((t) => t.sandboxPeaks?.length ?? NaN),
      0,
    )} |`;
  return `${phasesReport(trials, ks)}
Service side of the same trials: from the POST to the first test's start in its sandbox (its first
step's \`started_at\`), the sandboxes a suite run used, and the
peak of each sandbox's memory cgroup (\`memory.max_usage_in_bytes\`, Chromium, the runner and the
sandbox's tmpfs; sampled every 200 ms while the suite runs), and how long its sandboxes outlive the
verdict (the runner and its browsers shutting down; the trial's CPU counts it, and the next trial starts
once the worker has no sandbox left), and the statements the worker's Postgres client sent for the suite
run, per test (\`bench/playwright/count-statements.cjs\`, preloaded into the worker: every claim, result
write, batch reservation and lease renewal, and the worker's periodic housekeeping meanwhile):

| K | POST → first test started (ms) | Sandboxes per suite run | Peak memory per sandbox (MiB) | Sandboxes gone after the verdict (ms) | Worker's Postgres statements per test |
|---|---|---|---|---|---|
${rows.join('\n')}

Batching against one sandbox per test, K=2, the same ${n} tests (\`PLAYWRIGHT_BATCH_SIZE=1\`: a worker of its
own, warmed by one single-test run; the batched rows are the K=2 service trials above):

| Worker | Trials | Wall (s) | CPU per test (ms) | Sandboxes per suite run |
|---|---|---|---|---|
${batchRow('batched (`PLAYWRIGHT_BATCH_SIZE=100`, the default)', batched)}
${batchRow('one sandbox per test (`PLAYWRIGHT_BATCH_SIZE=1`)', alone)}

${abReport(trials, n)}`;
}
