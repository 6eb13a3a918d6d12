import * as core from '@actions/core';

/** What the main step enqueued: a suite run, or the runs of a test or a project. */
export interface Enqueued {
  suiteRunId: string | null;
  runIds: string[];
}

const ENQUEUED = 'enqueued';
const IS_POST = 'isPost';
const FINISHED = 'finished';

/**
 * Marks the step's state so that the same bundle, started again as the `post` step, knows it is
 * the post step: the runner gives the post step only what the main step saved (`STATE_*`).
 */
export function markPostPhase(): void {
  core.saveState(IS_POST, 'true');
}

export function isPostPhase(): boolean {
  return core.getState(IS_POST) === 'true';
}

/** Saved right after the enqueue answers, so a job cancelled mid-wait still leaves the ids to the post step. */
export function saveEnqueued(enqueued: Enqueued): void {
  core.saveState(ENQUEUED, JSON.stringify(enqueued));
}

/** The ids the main step saved, or null when it enqueued nothing (it failed before, or was cancelled first). */
export function readEnqueued(): Enqueued | null {
  const text = core.getState(ENQUEUED);
  if (text === '') return null;
  try {
    const value = JSON.parse(text) as Partial<Enqueued>;
    const runIds = Array.isArray(value.runIds) ? value.runIds.filter((id) => typeof id === 'string') : [];
    return { suiteRunId: typeof value.suiteRunId === 'string' ? value.suiteRunId : null, runIds };
  } catch {
    return null;
  }
}

/** Saved when the main step reached its verdict: the post step then has nothing to cancel. */
export function markMainFinished(): void {
  core.saveState(FINISHED, 'true');
}

export function didMainFinish(): boolean {
  return core.getState(FINISHED) === 'true';
}
