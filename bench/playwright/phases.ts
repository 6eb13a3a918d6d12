/**
 * Where a trial's wall time goes, the same three phases on both sides: the head (the spawn of
 * `playwright test`, or the POST, to the first test's start), the body (the first test's start to the
 * last test's end) and the end (the last test's end to the exit, or to the suite run's verdict).
 * The service's test times are its steps' (each test's first step starts with the test, its last ends
 * with it); `playwright test`'s are its JSON report's.
 */
import { readFileSync } from 'node:fs';
import type { Db } from '@testrun/core/db';

export interface Phases {
  headMs: number;
  bodyMs: number;
  endMs: number;
  /** The mean of the tests' own durations: what the body spends in tests rather than between them. */
  testMs: number;
}

/** A test's start and end (epoch ms). */
type Span = [number, number];

/** The phases of a trial that began at `began` and ended at `ended` (epoch ms), of its tests' spans. */
function phasesOf(began: number, ended: number, tests: readonly Span[]): Phases {
  if (tests.length === 0) throw new Error('a trial without tests has no phases');
  const first = Math.min(...tests.map(([start]) => start));
  const last = Math.max(...tests.map(([, end]) => end));
  const testMs = tests.reduce((sum, [start, end]) => sum + end - start, 0) / tests.length;
  return { headMs: first - began, bodyMs: last - first, endMs: ended - last, testMs };
}

interface JsonSuite {
  suites?: JsonSuite[];
  specs?: Array<{ tests: Array<{ results: Array<{ startTime: string; duration: number }> }> }>;
}

/** The phases of `playwright test` spawned at `began` and gone at `ended`, from its JSON report. */
export function reportPhases(reportFile: string, began: number, ended: number): Phases {
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as { suites: JsonSuite[] };
  const tests: Span[] = [];
  const visit = (suite: JsonSuite) => {
    for (const result of (suite.specs ?? []).flatMap((s) => s.tests.flatMap((t) => t.results))) {
      const start = Date.parse(result.startTime);
      tests.push([start, start + result.duration]);
    }
    (suite.suites ?? []).forEach(visit);
  };
  report.suites.forEach(visit);
  return phasesOf(began, ended, tests);
}

/** The phases of suite run `suiteRunId`, POSTed at `sent` and ended at `ended`, from its runs' steps. */
export async function suiteRunPhases(db: Db, suiteRunId: string, sent: number, ended: number): Promise<Phases> {
  const rows = await db.$queryRaw<Array<{ first: Date; last: Date }>>`
    SELECT min(s.started_at) AS first,
           max(s.started_at + s.duration_ms * interval '1 millisecond') AS last
      FROM step_results s JOIN runs r ON r.id = s.run_id
     WHERE r.suite_run_id = ${suiteRunId} AND s.depth = 0
     GROUP BY s.run_id, s.attempt`;
  return phasesOf(
    sent,
    ended,
    rows.map((row) => [row.first.getTime(), row.last.getTime()]),
  );
}
