/**
 * Test by test, `playwright test`'s outcome against the service's status: the same test is the
 * same spec file, Playwright project and title path on both sides.
 */
import path from 'node:path';
import type { PlaywrightResult } from './playwright-side';
import type { ServiceResult } from './service-side';

export interface Row {
  file: string;
  title: string;
  project: string;
  playwright: string;
  testrun: string;
  /** `yes`, `no`, or `setup` (a setup project's test: under Playwright a test, in the service none of its own). */
  match: 'yes' | 'no' | 'setup';
  /** What each side said of a mismatched test. */
  why?: string;
}

/** The status the service gives a test whose Playwright outcome is `outcome` (docs/PLAYWRIGHT.md, Outcomes). */
export function agrees(outcome: PlaywrightResult['outcome'], status: string): boolean {
  switch (outcome) {
    case 'expected':
    case 'flaky':
      return status === 'passed';
    case 'unexpected':
      return status === 'failed' || status === 'error';
    case 'skipped':
      return status === 'skipped';
  }
}

const keyOf = (t: { file: string; project: string; titlePath: readonly string[] }) =>
  [t.file, t.project, ...t.titlePath].join('\0');

const seconds = (ms: number | null) => (ms === null ? '' : ` ${(ms / 1000).toFixed(1)} s`);

/** The rows of the table, in Playwright's order, then the service's tests Playwright did not report. */
export function compare(
  root: string,
  playwright: readonly PlaywrightResult[],
  service: readonly ServiceResult[],
  setupProjects: ReadonlySet<string>,
): Row[] {
  const byKey = new Map(service.map((t) => [keyOf(t), t]));
  const rows: Row[] = [];
  for (const pw of playwright) {
    const sv = byKey.get(keyOf(pw));
    byKey.delete(keyOf(pw));
    const tries = pw.tries > 1 ? `, ${pw.tries} tries` : '';
    const row: Row = {
      file: path.relative(root, pw.file),
      title: pw.titlePath.join(' › '),
      project: pw.project,
      playwright: `${pw.outcome} (${pw.status}${tries})${seconds(pw.durationMs)}`,
      testrun: sv
        ? `${sv.status}${sv.outcomeCode ? `/${sv.outcomeCode}` : ''}${sv.retry ? ` retry ${sv.retry}` : ''}${seconds(sv.durationMs)}`
        : '—',
      match: 'yes',
    };
    if (!sv) row.match = setupProjects.has(pw.project) ? 'setup' : 'no';
    else if (!agrees(pw.outcome, sv.status)) row.match = 'no';
    if (row.match === 'no')
      row.why = `playwright: ${pw.error ?? pw.status}; testrun: ${sv ? sv.summary : 'no run of this test'}`;
    rows.push(row);
  }
  for (const sv of byKey.values())
    rows.push({
      file: path.relative(root, sv.file),
      title: sv.titlePath.join(' › '),
      project: sv.project,
      playwright: '—',
      testrun: `${sv.status}${sv.outcomeCode ? `/${sv.outcomeCode}` : ''}`,
      match: 'no',
      why: `playwright test did not report it; testrun: ${sv.summary}`,
    });
  return rows;
}

/** The rows as a text table, long cells cut to `width`, and the reasons of the mismatches below it. */
export function formatTable(rows: readonly Row[], width = 56): string {
  const cut = (s: string) => (s.length > width ? `${s.slice(0, width - 1)}…` : s);
  const head = ['file', 'title', 'project', 'playwright', 'testrun', 'match'];
  const cells = rows.map((r) => [r.file, r.title, r.project, r.playwright, r.testrun, r.match].map(cut));
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: readonly string[]) =>
    c
      .map((s, i) => s.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const out = [line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)];
  const mismatched = rows.filter((r) => r.match === 'no');
  if (mismatched.length) out.push('', 'Mismatches:');
  for (const r of mismatched) out.push(`- ${r.file} › ${r.title} [${r.project}]: ${r.why ?? ''}`);
  return out.join('\n');
}
