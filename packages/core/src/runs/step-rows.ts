import type { StepAction } from '@testrun/contracts';
import type { Db } from '../db';

/** One row of `step_results`: a step of a run's attempt as the worker recorded it. */
export type StepRowInsert = {
  id: string;
  runId: string;
  attempt: number;
  /** 1-based position of the step in the test. */
  index: number;
  /** The step-language action; null for a Playwright test's step (it has a `category`). */
  action?: StepAction | null;
  category?: string | null;
  depth?: number;
  location?: string | null;
  label: string;
  target: string;
  outcome: 'passed' | 'failed' | 'error' | 'skipped';
  error: string | null;
  startedAt: Date;
  durationMs: number;
  screenshotId?: string | null;
  expected?: string | null;
  received?: string | null;
  pageUrl?: string | null;
  pageTitle?: string | null;
};

/** Each column of `step_results` with its array type, and how a row gives its value. */
const COLUMNS: ReadonlyArray<readonly [string, string, (row: StepRowInsert) => unknown]> = [
  ['id', 'text', (r) => r.id],
  ['run_id', 'text', (r) => r.runId],
  ['attempt', 'int', (r) => r.attempt],
  ['index', 'int', (r) => r.index],
  ['action', '"StepAction"', (r) => r.action ?? null],
  ['category', 'text', (r) => r.category ?? null],
  ['depth', 'int', (r) => r.depth ?? 0],
  ['location', 'text', (r) => r.location ?? null],
  ['label', 'text', (r) => r.label],
  ['target', 'text', (r) => r.target],
  ['outcome', '"StepOutcome"', (r) => r.outcome],
  ['error', 'text', (r) => r.error],
  ['started_at', 'timestamptz', (r) => r.startedAt],
  ['duration_ms', 'int', (r) => r.durationMs],
  ['screenshot_id', 'text', (r) => r.screenshotId ?? null],
  ['expected', 'text', (r) => r.expected ?? null],
  ['received', 'text', (r) => r.received ?? null],
  ['page_url', 'text', (r) => r.pageUrl ?? null],
  ['page_title', 'text', (r) => r.pageTitle ?? null],
];

const INSERT_STEP_ROWS = `INSERT INTO step_results (${COLUMNS.map(([name]) => name).join(', ')})
  SELECT * FROM unnest(${COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')})`;

/**
 * Inserts a run's step rows in one statement, a column an array (`unnest`): the rows of a Playwright
 * test's step tree cost one round trip, and a fraction of the CPU the ORM's createMany spends
 * building the same statement (its query plan is compiled anew for each number of rows).
 */
export async function insertStepRows(db: Db, rows: readonly StepRowInsert[]): Promise<void> {
  if (rows.length === 0) return;
  await db.$executeRawUnsafe(INSERT_STEP_ROWS, ...COLUMNS.map(([, , value]) => rows.map(value)));
}
