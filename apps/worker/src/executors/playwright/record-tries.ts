// A Playwright test its config retried within one execution (docs/PLAYWRIGHT.md, "What of your config
// applies"): each try before the last is an attempt of the run of its own, as a retry of the
// service's is, with its outcome, steps and attachments under an execution number of its own.
import type { RetriedOutcome, RunOutcome } from '@testrun/core/runs';
import type { ArtifactWriter } from '../../run/artifact-writer';
import { blockedEvents } from '../../network/run-target';
import { withRecordingNotes } from '../../run/run-limits';
import type { SecretMask } from '../../run/secret-mask';
import type { SandboxedAttempt } from './sandboxed-attempt';
import { classifyAttempt } from './runner/outcome';
import { keptSnapshots } from './runner/snapshots';
import { outcomeOf, stepRows } from './record-result';
import { attachmentBudget, overCountNote, storeAttachments, type AttachmentSource } from './store-attachments';
import type { PlaywrightAttempt, PlaywrightTestResult } from './runner/types';

/** Where a test's result is read from: when it began (ms since the epoch), its scratch directory, the run's mask. */
export interface ResultSource {
  startedAt: number;
  scratchDir: string;
  mask: SecretMask;
}

/**
 * Records a test's result and returns the run's outcome, its last try's: each earlier try (its
 * config's retries) becomes an attempt of the run (ExecutorAttempt.nextTry), then the last try's
 * steps and attachments are recorded under the execution number that follows them. Tries follow one
 * another from when the test began, each as long as Playwright measured it.
 */
export async function recordTries(
  attempt: SandboxedAttempt,
  result: PlaywrightTestResult,
  at: ResultSource,
): Promise<RunOutcome> {
  const tries = result.attempts;
  let [writer, startedAt] = [attempt.writer, at.startedAt];
  // The run's tries share its caps on what their tests attached on purpose.
  const files: AttachmentSource = {
    scratchDir: at.scratchDir,
    mask: at.mask,
    maxFileBytes: attempt.limits.maxRecordingBytes,
    budget: attachmentBudget(attempt.limits),
  };
  for (const earlier of tries.slice(0, -1)) {
    const notes = await recordTry(writer, earlier, startedAt, at, files);
    const finishedAt = startedAt + earlier.durationMs;
    const ended = retriedOf(withRecordingNotes(triedOutcome(earlier, at.mask), notes));
    const ran = { startedAt: new Date(startedAt), finishedAt: new Date(finishedAt) };
    const next = await attempt.nextTry(ended, ran);
    // The run was ended or taken over meanwhile: its terminal write will change nothing either.
    if (!next) return outcomeOf(result, at.mask);
    [writer, startedAt] = [next, finishedAt];
  }
  const endedAt = new Date(startedAt + (tries.at(-1)?.durationMs ?? 0));
  writer.recordPageEvents(blockedEvents(result.blocked, (text) => at.mask.text(text), endedAt));
  const notes = await recordTry(writer, result, startedAt, at, files);
  notes.push(...overCountNote(files.budget, attempt.limits));
  const snapshots = keptSnapshots(tries);
  if (attempt.visual && snapshots.length > 0)
    notes.push(
      ...(await attempt.visual.record(attempt.run, snapshots, at.scratchDir, attempt.limits.maxRecordingBytes)),
    );
  const outcome = outcomeOf(result, at.mask);
  // After earlier tries, the run's duration is all of them (each try's own is its attempt's).
  const total = tries.reduce((sum, one) => sum + one.durationMs, 0);
  return withRecordingNotes(tries.length > 1 ? { ...outcome, durationMs: Math.round(total) } : outcome, notes);
}

/** Records one try's steps and attachments through `writer` and waits for them; returns notes for its summary. */
async function recordTry(
  writer: ArtifactWriter,
  one: Pick<PlaywrightAttempt, 'steps' | 'errors' | 'attachments'>,
  startedAt: number,
  at: ResultSource,
  files: AttachmentSource,
): Promise<string[]> {
  writer.recordTreeSteps(stepRows(one, startedAt, at.mask));
  const notes = await storeAttachments(writer, one, files);
  await writer.flush();
  return notes;
}

/** The outcome of a try Playwright retried, as its test's last try's is classified. */
function triedOutcome(earlier: PlaywrightAttempt, mask: SecretMask): RunOutcome {
  const { errors, steps, durationMs } = earlier;
  return outcomeOf({ ...classifyAttempt(earlier), errors, steps, durationMs }, mask);
}

/**
 * A retried try is failed or in error, as a retried attempt is (Playwright retries neither a pass
 * nor a skip; were one reported, it is recorded as an error).
 */
function retriedOf(outcome: RunOutcome): RetriedOutcome {
  if (outcome.status === 'failed' || outcome.status === 'error') return outcome;
  return { status: 'error', code: null, resultSummary: outcome.resultSummary };
}
