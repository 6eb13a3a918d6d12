import path from 'node:path';
import type { ArtifactKind } from '@testrun/contracts';
import type { RunOutcome } from '@testrun/core/runs';
import type { ArtifactWriter, TreeStepRow } from '../../run/artifact-writer';
import { readScratchFile, ScratchPathError } from '../../sandbox';
import type { SecretMask } from '../../run/secret-mask';
import { failingStep, stripAnsi } from './outcome';
import type { PlaywrightAttempt, PlaywrightStep, PlaywrightTestResult } from './types';

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

/** How an attachment is kept: screenshots, the trace and the video as the run's artifacts. */
function artifactKind(name: string, contentType: string): ArtifactKind | null {
  if (name === 'trace' || contentType === 'application/zip') return 'trace';
  if (name === 'video' || contentType.startsWith('video/')) return 'video';
  if (contentType.startsWith('image/')) return 'screenshot';
  return null;
}

/**
 * Stores the result's attachments that are files under the scratch directory, up to `maxFileBytes`
 * each. Their paths are the test's, so the tenant's: each is read through no link in any folder,
 * from the scratch directory's own file system only (readScratchFile), even while the sandbox still
 * runs; one that is refused (a link, a FIFO, a path out of the scratch directory, too large) is not
 * kept, and the run's notes say why. A trace is stored as the test wrote it: Playwright records
 * what the page was sent, so a run's secret headers can be in it (docs/PLAYWRIGHT.md).
 */
export async function storeAttachments(
  writer: ArtifactWriter,
  result: Pick<PlaywrightAttempt, 'attachments'>,
  scratchDir: string,
  maxFileBytes: number,
): Promise<string[]> {
  const notes: string[] = [];
  for (const attachment of result.attachments) {
    const kind = artifactKind(attachment.name, attachment.contentType);
    if (!kind) continue;
    let body: Buffer;
    try {
      body = await readScratchFile(scratchDir, path.relative(scratchDir, attachment.path), maxFileBytes);
    } catch (error) {
      if (error instanceof ScratchPathError) notes.push(refusalNote(attachment.name, error, maxFileBytes));
      continue;
    }
    writer.recordRunFile(kind, path.basename(attachment.path), attachment.contentType, body);
  }
  return notes;
}

/** The run's note for an attachment that was not read (its path as the test named it is not repeated). */
function refusalNote(name: string, error: ScratchPathError, maxFileBytes: number): string {
  const label = name.slice(0, 100);
  if (/ is over \d+ bytes/.test(error.message))
    return `the ${label} is over the ${maxFileBytes}-byte limit and was not kept`;
  return `the ${label} was not kept: its file ${error.reason}`;
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
