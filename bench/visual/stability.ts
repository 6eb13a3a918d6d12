/**
 * The stability half of `pnpm bench visual`: the `@steady` pages (bench/visual/project.ts) compared
 * against their approved baselines by suite runs of workers of 1 and 2 slots, each with batches
 * (`PLAYWRIGHT_BATCH_SIZE` by default) and with a sandbox per test (`PLAYWRIGHT_BATCH_SIZE=1`). Every
 * comparison must find the page unchanged: a run that ends `screenshot_changed` is counted, with the
 * differing pixels Playwright's message gives.
 */
import type { PlaywrightService } from '../playwright/service';
import { STEADY_TESTS } from './project';

/** A worker of the stability half: its slots and its batch size (`undefined`: the default). */
interface WorkerConfig {
  slots: number;
  batchSize?: number;
}

const CONFIGS: WorkerConfig[] = [{ slots: 1 }, { slots: 1, batchSize: 1 }, { slots: 2 }, { slots: 2, batchSize: 1 }];

/** What one worker's suite runs found. */
export interface StabilityRow {
  config: WorkerConfig;
  suiteRuns: number;
  comparisons: number;
  passed: number;
  changed: number;
  /** Runs that failed or ended in error for another reason than a changed screenshot. */
  other: number;
  /** For each changed run: its test and the differing pixels (or Playwright's first line where it gives no count). */
  findings: string[];
}

/** The differing pixels a failed comparison's message gives, or its first line. */
function pixels(message: string | null): string {
  const text = message ?? '';
  const count = /(\d+) pixels \(ratio [\d.]+ of all image pixels\) are different/.exec(text);
  if (count) return `${count[1]} pixels`;
  return text.split('\n').find((line) => line.trim() !== '') ?? 'no message';
}

/** `runs` suite runs of `steady` for each worker config, every one after a fresh worker's warm-up run. */
export async function measureStability(
  service: PlaywrightService,
  runs: number,
  out: (line: string) => void,
): Promise<StabilityRow[]> {
  const rows: StabilityRow[] = [];
  for (const config of CONFIGS) {
    const env: Record<string, string> = config.batchSize ? { PLAYWRIGHT_BATCH_SIZE: String(config.batchSize) } : {};
    await service.useWorker(config.slots, { projectSlug: 'bench-visual', suiteSlug: 'steady' }, env);
    const row: StabilityRow = { config, suiteRuns: 0, comparisons: 0, passed: 0, changed: 0, other: 0, findings: [] };
    for (let i = 0; i < runs; i++) {
      const started = await service.startSuite('bench-visual', 'steady');
      await started.ended;
      const found = await service.runsOf(started.id);
      if (found.length !== STEADY_TESTS) throw new Error(`steady: ${found.length} runs, not ${STEADY_TESTS}`);
      row.suiteRuns += 1;
      for (const run of found) {
        row.comparisons += 1;
        if (run.status === 'passed') row.passed += 1;
        else if (run.outcomeCode === 'screenshot_changed') {
          row.changed += 1;
          row.findings.push(`${run.testName}: ${pixels(run.outcomeMessage)}`);
        } else {
          row.other += 1;
          row.findings.push(`${run.testName}: ${run.status} ${run.outcomeCode ?? ''} ${pixels(run.outcomeMessage)}`);
        }
      }
    }
    out(
      `steady, ${label(config)}: ${row.passed} of ${row.comparisons} unchanged${row.findings.map((f) => `; ${f}`).join('')}`,
    );
    rows.push(row);
  }
  return rows;
}

function label(config: WorkerConfig): string {
  const batch = config.batchSize ? `\`PLAYWRIGHT_BATCH_SIZE=${config.batchSize}\`` : 'batched (default)';
  return `\`WORKER_CONCURRENCY=${config.slots}\`, ${batch}`;
}

/** The stability table, with a total row. */
export function stabilityTable(rows: readonly StabilityRow[]): string {
  const sum = (of: (r: StabilityRow) => number) => rows.reduce((total, r) => total + of(r), 0);
  const findings = (list: readonly string[]) => (list.length ? list.join('; ').replace(/\|/g, '\\|') : '–');
  const lines = rows.map(
    (r) =>
      `| ${label(r.config)} | ${r.suiteRuns} | ${r.comparisons} | ${r.passed} | ${r.changed} | ${r.other} | ${findings(r.findings)} |`,
  );
  return `| Worker | Suite runs | Comparisons | Unchanged (passed) | \`screenshot_changed\` | Other failures | Differing pixels |
|---|---|---|---|---|---|---|
${lines.join('\n')}
| **total** | ${sum((r) => r.suiteRuns)} | ${sum((r) => r.comparisons)} | ${sum((r) => r.passed)} | ${sum((r) => r.changed)} | ${sum((r) => r.other)} | ${findings(rows.flatMap((r) => r.findings))} |
`;
}
