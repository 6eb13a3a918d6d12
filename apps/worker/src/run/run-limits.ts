import type { RunOutcome } from '@testrun/core/runs';
import { DEFAULT_PAGE_LIMITS, type PageLimits } from '../browser/page-guard';

/** What one run may use of the worker: its pages' limits and the size of its recordings. */
export interface RunLimits extends PageLimits {
  /**
   * Largest trace or video file kept, in bytes, and the bytes of all the files a Playwright test
   * attached on purpose that one run keeps. Default 50 MB.
   */
  maxRecordingBytes: number;
  /** Files a Playwright test attached on purpose (testInfo.attach) that one run keeps. Default 50. */
  maxAttachments: number;
}

/** Defaults of {@link RunLimits}. */
export const DEFAULT_RUN_LIMITS: RunLimits = {
  ...DEFAULT_PAGE_LIMITS,
  maxRecordingBytes: 50 * 1024 * 1024,
  maxAttachments: 50,
};

/** The outcome with the notes about recordings left out appended to its summary. */
export function withRecordingNotes(outcome: RunOutcome, notes: readonly string[]): RunOutcome {
  if (notes.length === 0) return outcome;
  return { ...outcome, resultSummary: [outcome.resultSummary, ...notes].join(' ') };
}

/**
 * Chromium flags that bound each renderer's JavaScript heap at four times the sampled cap: a page that
 * allocates faster than the guard samples crashes its own renderer (the guard names it) instead of
 * taking the machine's memory.
 */
export function memoryArgs(limits: Pick<RunLimits, 'heapBytes'>): string[] {
  return [`--js-flags=--max-old-space-size=${Math.ceil((4 * limits.heapBytes) / (1024 * 1024))}`];
}
