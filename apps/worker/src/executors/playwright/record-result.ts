import type { RunOutcome } from '@testrun/core/runs';
import type { TreeStepRow } from '../../run/artifact-writer';
import type { SecretMask } from '../../run/secret-mask';
import { failingStep } from './runner/outcome';
import { stripAnsi } from './runner/strip-ansi';
import type { PlaywrightAttempt, PlaywrightStep, PlaywrightTestResult } from './runner/types';

// A Playwright test's result as the run records it: its steps as step rows, its attachments as
// artifacts, and its outcome — every text masked.

/** Step rows of one attempt: the tree flattened depth first, at most this many (the rest are dropped). */
const MAX_STEP_ROWS = 1_000;

/** The step rows of one try of a Playwright test (the result's: its last), masked. */
export function stepRows(
  result: Pick<PlaywrightAttempt, 'steps' | 'errors'>,
  startedAt: number,
  mask: SecretMask,
): TreeStepRow[] {
  const rows: TreeStepRow[] = [];
  // The failing step shows the source lines around the error, from the team's TypeScript
  // (Playwright maps them through the bundle's source): the step's own, else the test's error's.
  const failing = failingStep(result.steps)?.step;
  const errorText = (step: PlaywrightStep): string | null => {
    if (!step.error) return null;
    const snippet = step.error.snippet ?? (step === failing ? result.errors[0]?.snippet : undefined);
    const text = snippet ? `${step.error.message}\n\n${stripAnsi(snippet)}` : step.error.message;
    return mask.text(text).slice(0, 20_000);
  };
  const walk = (steps: readonly PlaywrightStep[], depth: number) => {
    for (const step of steps) {
      if (rows.length >= MAX_STEP_ROWS) return;
      rows.push({
        category: step.category,
        depth,
        label: mask.text(step.title).slice(0, 2_000),
        target: '',
        location: step.location ? `${step.location.file}:${step.location.line}` : null,
        outcome: step.error ? (step.category === 'expect' ? 'failed' : 'error') : 'passed',
        error: errorText(step),
        startedAt: new Date(startedAt + step.startMs),
        durationMs: step.durationMs,
      });
      walk(step.steps, depth + 1);
    }
  };
  walk(result.steps, 0);
  return rows;
}

/** The run's outcome from the test's result (codes as docs/WORKER.md's "Playwright tests: outcomes"). */
export function outcomeOf(
  result: Omit<PlaywrightTestResult, 'key' | 'attempts' | 'attachments' | 'stdout' | 'stderr' | 'blocked'>,
  mask: SecretMask,
): RunOutcome {
  const resultSummary = mask.text(result.summary);
  const message = result.errors[0] ? mask.text(result.errors[0].message).slice(0, 4_000) : null;
  const durationMs = Math.round(result.durationMs);
  // The step the summary names ("at step 2"), by its row in the step table, when the table has it.
  const row = failingStep(result.steps)?.number ?? null;
  const step = row !== null && row <= MAX_STEP_ROWS ? row : null;
  switch (result.status) {
    case 'passed':
      return { status: 'passed', resultSummary, durationMs };
    case 'skipped':
      return { status: 'skipped', skipReason: result.skipReason ?? 'skipped_in_code', resultSummary, durationMs };
    case 'failed':
      return { status: 'failed', code: result.code as never, message, step, resultSummary, durationMs };
    case 'error':
      return { status: 'error', code: result.code as never, message, step, resultSummary, durationMs };
  }
}
