/**
 * What the real-suite head-to-head prints: each round, the ratios service / `playwright test` of
 * wall and CPU (round against round) with their spread, and each test's median duration per side.
 */
import { spread } from '../report';
import type { Round } from './service';
import { startupTable } from './startup';

export type Side = 'playwright' | 'service';

/** Everything measured, as kept in the results file. */
export interface Results {
  label: string;
  workers: number;
  machine: string;
  began: string;
  /** The service side's request `evidence` (`--evidence`), when given. */
  evidence?: string;
  rounds: (Round & {
    round: number;
    side: Side;
    /** 1-minute load average at its start. */ load: number;
    at: string;
  })[];
}

/** Median (min–max) of `values`, or a dash for none. */
function fmt(values: readonly number[], digits: number): string {
  if (values.length === 0) return '–';
  const { median, min, max } = spread(values);
  return `${median.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
}

const median = (values: readonly number[]) => (values.length ? spread(values).median : NaN);

/** Per test: its median duration on each side over the rounds, and how often each side passed it. */
function perTest(results: Results) {
  const tests = new Map<string, Record<Side, { ms: number[]; passed: number }>>();
  for (const r of results.rounds)
    for (const t of r.tests) {
      const entry = tests.get(t.key) ?? { playwright: { ms: [], passed: 0 }, service: { ms: [], passed: 0 } };
      entry[r.side].ms.push(t.durationMs);
      if (['passed', 'expected', 'flaky'].includes(t.status)) entry[r.side].passed++;
      tests.set(t.key, entry);
    }
  return [...tests.entries()].map(([key, sides]) => ({
    key,
    playwright: median(sides.playwright.ms),
    service: median(sides.service.ms),
    passed: `${sides.playwright.passed}/${sides.playwright.ms.length} · ${sides.service.passed}/${sides.service.ms.length}`,
  }));
}

/** A start-up figure over the rounds that have it, in seconds: median (min–max), or – when none has. */
function firsts(rounds: readonly Round[], of: 'firstTestMs' | 'firstResultMs'): string {
  const known = rounds.flatMap((r) => (r[of] === undefined ? [] : [r[of] / 1000]));
  return known.length ? fmt(known, 2) : '–';
}

/** The report's markdown: rounds, ratios with spread, per-test medians and the largest differences. */
export function formatReport(results: Results): string {
  const side = (s: Side) => results.rounds.filter((r) => r.side === s);
  const [pw, sv] = [side('playwright'), side('service')];
  const occupancy = (r: Round) => r.tests.reduce((total, t) => total + t.durationMs, 0) / (results.workers * r.wallMs);
  const pairs = sv.flatMap((s) => {
    const p = pw.find((r) => r.round === s.round);
    return p ? [{ s, p }] : [];
  });
  const lines = [
    `### ${results.label}, K = ${results.workers}`,
    '',
    `${results.machine}; began ${results.began}${results.evidence ? `; the service's evidence ${results.evidence}` : ''}.`,
    '',
    '| Round | Side | Wall (s) | CPU (s) | Passed | Load (1 min) |',
    '|---|---|---|---|---|---|',
    ...results.rounds.map(
      (r) =>
        `| ${r.round} | ${r.side} | ${(r.wallMs / 1000).toFixed(1)} | ${(r.cpuMs / 1000).toFixed(1)} | ${r.passed} of ${r.tests.length} | ${r.load.toFixed(1)} |`,
    ),
    '',
    '| | Wall (s) | CPU (s) |',
    '|---|---|---|',
    `| \`playwright test --workers=${results.workers}\` | ${fmt(
      pw.map((r) => r.wallMs / 1000),
      1,
    )} | ${fmt(
      pw.map((r) => r.cpuMs / 1000),
      1,
    )} |`,
    `| service, ${results.workers} slots | ${fmt(
      sv.map((r) => r.wallMs / 1000),
      1,
    )} | ${fmt(
      sv.map((r) => r.cpuMs / 1000),
      1,
    )} |`,
    `| **ratio** service / playwright test (round by round) | **${fmt(
      pairs.map(({ s, p }) => s.wallMs / p.wallMs),
      2,
    )}** | **${fmt(
      pairs.map(({ s, p }) => s.cpuMs / p.cpuMs),
      2,
    )}** |`,
    '',
    'Figures: median (min–max).',
    '',
    `Slots filled by the tests themselves (their durations summed / (K × wall)): \`playwright test\` ${fmt(pw.map(occupancy), 2)}, service ${fmt(sv.map(occupancy), 2)}.`,
    '',
    `From the start (spawning \`playwright test\`; the service's POST) to the first test running: \`playwright test\` ${firsts(pw, 'firstTestMs')}, service ${firsts(sv, 'firstTestMs')}; to the first test's result: ${firsts(pw, 'firstResultMs')} and ${firsts(sv, 'firstResultMs')} (s).`,
    ...startupTable(sv),
  ];
  const tests = perTest(results);
  const sum = (of: 'playwright' | 'service') =>
    tests.reduce((total, t) => total + (Number.isNaN(t[of]) ? 0 : t[of]), 0);
  lines.push(
    '',
    `Per test (${tests.length}), median duration over the rounds: sum ${(sum('playwright') / 1000).toFixed(1)} s under \`playwright test\`, ${(sum('service') / 1000).toFixed(1)} s in the service; median of the per-test ratios ${median(tests.filter((t) => t.playwright > 0).map((t) => t.service / t.playwright)).toFixed(2)}.`,
    '',
    '| Test | playwright test (ms) | service (ms) | Ratio | Passed (pw · service) |',
    '|---|---|---|---|---|',
    ...[...tests]
      .sort((a, b) => b.service - b.playwright - (a.service - a.playwright))
      .map(
        (t) =>
          `| ${t.key} | ${t.playwright.toFixed(0)} | ${t.service.toFixed(0)} | ${t.playwright > 0 ? (t.service / t.playwright).toFixed(2) : '–'} | ${t.passed} |`,
      ),
  );
  return lines.join('\n');
}
