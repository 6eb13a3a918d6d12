/**
 * The `visual` section of docs/BENCHMARKS.md: the trials of each side with and without the
 * screenshot, the ratios of the service to `playwright test` paired by round, what one screenshot
 * adds on each side (with minus without, the same round), and the stability table.
 */
import { machineLine, spread } from '../report';
import { HEADLESS_CHROMIUM } from '../h2h/service';
import type { Trial } from '../playwright/service';
import { stabilityTable, type StabilityRow } from './stability';

export type Variant = 'shot' | 'plain';

/** A trial of the cost half, with the mean duration of its `toHaveScreenshot` steps (none without them). */
export type VisualTrial = Trial & { shotStepMs?: number };

/** The cost half's trials by `side:variant` (`playwright:shot`, `service:plain` …), in round order. */
export type CostTrials = Map<string, VisualTrial[]>;

/** The target: what a screenshot adds in the service, at most this times what it adds to `playwright test`. */
const TARGET = 1.1;

/** Median (min–max) of the finite values, or "–". */
function fmt(values: readonly number[], digits: number): string {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return '–';
  const { median, min, max } = spread(finite);
  return `${median.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
}

const median = (values: readonly number[]) => {
  const finite = values.filter(Number.isFinite);
  return finite.length ? spread(finite).median : NaN;
};

/** `f` of each round's pair of `a` and `b`. */
function paired<T>(a: readonly T[], b: readonly T[], f: (x: T, y: T) => number): number[] {
  return a.flatMap((x, i) => {
    const y = b[i];
    return y ? [f(x, y)] : [];
  });
}

const testMs = (t: Trial) => t.phases?.testMs ?? NaN;

/** Per screenshot, with minus without the same round: wall and CPU over the `n` tests, a test's own time. */
const DELTAS: { label: string; of: (shot: Trial, plain: Trial, n: number) => number }[] = [
  { label: 'Wall time per screenshot (suite wall, with − without, ÷ N)', of: (s, p, n) => (s.wallMs - p.wallMs) / n },
  { label: "A test's own duration (mean, with − without)", of: (s, p) => testMs(s) - testMs(p) },
  { label: 'CPU per screenshot (with − without, ÷ N)', of: (s, p, n) => (s.cpuMs - p.cpuMs) / n },
];

interface Report {
  cost: CostTrials;
  stability: readonly StabilityRow[];
  /** The share of the machine's cores other processes than the trials' took during the rounds. */
  otherShare: number;
  minutes: number;
  n: number;
  k: number;
  rounds: number;
  command: string;
}

function trialsTable(r: Report): string {
  const rows = (['shot', 'plain'] as const).flatMap((variant) =>
    (['playwright', 'service'] as const).map((side) => {
      const list = r.cost.get(`${side}:${variant}`) ?? [];
      const suite = variant === 'shot' ? 'with `toHaveScreenshot`' : 'without';
      const who =
        side === 'playwright' ? `\`playwright test --workers=${r.k}\`` : `service (\`WORKER_CONCURRENCY=${r.k}\`)`;
      return `| ${suite} | ${who} | ${fmt(
        list.map((t) => t.wallMs / 1000),
        2,
      )} | ${fmt(
        list.map((t) => t.cpuMs / r.n),
        0,
      )} | ${fmt(list.map(testMs), 0)} |`;
    }),
  );
  const ratio = (variant: Variant, of: (t: Trial) => number) =>
    fmt(
      paired(
        r.cost.get(`service:${variant}`) ?? [],
        r.cost.get(`playwright:${variant}`) ?? [],
        (s, p) => of(s) / of(p),
      ),
      3,
    );
  return `| Suite | Side | Wall (s) | CPU per test (ms) | A test (ms) |
|---|---|---|---|---|
${rows.join('\n')}

| Suite | Service / \`playwright test\`, wall | CPU | A test |
|---|---|---|---|
| with \`toHaveScreenshot\` | ${ratio('shot', (t) => t.wallMs)} | ${ratio('shot', (t) => t.cpuMs)} | ${ratio('shot', testMs)} |
| without | ${ratio('plain', (t) => t.wallMs)} | ${ratio('plain', (t) => t.cpuMs)} | ${ratio('plain', testMs)} |
`;
}

/**
 * A row of the added-cost table: each side's figures, their ratio by round and of the medians, and the
 * verdict: met (or missed) when both medians are within (or over) the target, unsettled when they disagree.
 */
function costRow(label: string, local: readonly number[], service: readonly number[]): string {
  const ratios = paired(service, local, (s, p) => (p > 0 ? s / p : NaN));
  const ofMedians = median(service) / median(local);
  const within = [median(ratios), ofMedians].filter(Number.isFinite).map((ratio) => ratio <= TARGET);
  const met = within.length < 2 ? '–' : within.every(Boolean) ? 'met' : within.some(Boolean) ? 'unsettled' : 'missed';
  return `| ${label} | ${fmt(local, 0)} | ${fmt(service, 0)} | ${fmt(ratios, 2)} | ${ofMedians.toFixed(2)} | ≤ ${TARGET} | ${met} |`;
}

function deltaTable(r: Report): string {
  const deltas = (side: string, of: (s: Trial, p: Trial, n: number) => number) =>
    paired(r.cost.get(`${side}:shot`) ?? [], r.cost.get(`${side}:plain`) ?? [], (s, p) => of(s, p, r.n));
  const rows = DELTAS.map(({ label, of }) => costRow(label, deltas('playwright', of), deltas('service', of)));
  const steps = (side: string) => (r.cost.get(`${side}:shot`) ?? []).map((t) => t.shotStepMs ?? NaN);
  rows.push(costRow('The `toHaveScreenshot` step itself (its mean in a trial)', steps('playwright'), steps('service')));
  return `| What one screenshot costs (ms) | \`playwright test\` | service | Service / \`playwright test\`, paired by round | Of the medians | Target | Met |
|---|---|---|---|---|---|---|
${rows.join('\n')}
`;
}

/** The section's markdown. */
export function visualReport(r: Report): string {
  const comparisons = r.stability.reduce((sum, row) => sum + row.comparisons, 0);
  const changed = r.stability.reduce((sum, row) => sum + row.changed + row.other, 0);
  return `## Visual comparison

\`pnpm bench visual\` (\`bench/visual/\`; \`BENCH_VISUAL_TESTS\`, \`BENCH_VISUAL_ROUNDS\`, \`BENCH_VISUAL_K\`,
\`BENCH_VISUAL_STEADY_RUNS\` change the run). These figures: \`${r.command}\`, ${r.minutes.toFixed(1)} minutes in all.

- ${machineLine()}; measured ${new Date().toISOString().slice(0, 10)}. The machine has 2 cores and is shared: other
  work may run beside the bench. During the rounds, processes other than the trials' own took
  ${(r.otherShare * 100).toFixed(0)}% of its cores (the machine's busy time from \`/proc/stat\` less the trials' CPU; the
  bench's own bookkeeping between trials included). The figures are indicative, their spreads say how much.
- The spec (\`bench/visual/project.ts\`): ${r.n} tests, each \`page.setContent\` of a 1280×720 dashboard (a header,
  eight cards of text, bars and circles, on a gradient), then \`await expect(page).toHaveScreenshot('p<i>.png')\`
  with Playwright's defaults; and the same ${r.n} tests without that line. Viewport 1280×720, \`fullyParallel\`,
  Chromium at \`${HEADLESS_CHROMIUM}\` with the worker's flags on both sides, trace, video and screenshots off.
- **playwright test**: \`playwright test --workers=${r.k} --grep @shot\` (or \`@plain\`), its baselines on disk,
  written by a run with \`--update-snapshots\` first (which also warmed its compile cache); wall from spawn to
  exit, CPU from a control group of its own. **service**: the project deployed with \`testrun deploy\`, one
  suite run of everything (which made the baselines, awaiting approval), all approved through
  \`POST /api/v1/suite-runs/{id}/visual-changes/approve\` with a \`deploy\` key, a fresh worker warmed by one
  compared run; then suite runs \`shot\` and \`plain\` (evidence off), wall from the POST to the verdict, CPU of
  the API, the worker, its sandboxes and the Postgres backends.
- ${r.rounds} rounds; each round runs both suites on both sides, the side and the suite that go first
  alternating. Figures: median (min–max); a ratio or a difference is taken within a round, then its median.

${trialsTable(r)}
The added cost of the screenshot comparison itself, each side's suite with it minus without it in the same
round, and the \`toHaveScreenshot\` step's own duration (\`playwright test\`: its reporter's step, from a
reporter of the bench's config the service replaces; the service: its step rows). The target: what a
\`toHaveScreenshot\` costs the service at most ${TARGET}× what it costs \`playwright test\`. A round's own ratio
divides two differences of noisy figures, so the verdict reads both the median of those ratios and the ratio of
the medians: met (missed) when both are within (over) the target, unsettled when they disagree:

${deltaTable(r)}
### Stability: the same pages, compared again and again

Six pages (\`@steady\`), each compared at \`threshold: 0\` (a pixel whose colour differs at all counts; Playwright's
default is 0.2) and no allowed differing pixels: a static dashboard; one with an infinite CSS animation, a
finite one and a transition started after the first frame (left to \`animations: 'disabled'\`, the default); a
focused input and a textarea holding text (\`caret: 'hide'\`, the default); one element of a page; 24 lines of
text in nine sizes, italic and spaced; a full page that scrolls (\`fullPage: true\`). The baselines are those the
first suite run made and the approval kept; each worker below is fresh and warmed by one suite run of
these pages (not counted), then runs ${r.stability[0]?.suiteRuns ?? 0} suite runs of them with the default evidence:

${stabilityTable(r.stability)}
${changed === 0 ? `Every one of the ${comparisons} comparisons found 0 differing pixels` : `${changed} of the ${comparisons} comparisons did not pass`}; the cost half's service suite
runs with screenshots compared another ${r.n * r.rounds} pages (each suite run must pass whole, or the bench stops).
`;
}
