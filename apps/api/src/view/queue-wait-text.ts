import {
  formatDuration,
  QUEUE_WAIT_WORTH_SAYING_MS,
  queueWaitReason,
  queueWaitWords,
  type RunStatus,
} from '@testrun/contracts';
import type { ViewQueueWait } from './model';

/** What a run or suite run row says of its time in the queue. */
export type Queued = { createdAt: Date; startedAt: Date | null; status: RunStatus; queuedAhead: number | null };

/**
 * How long it waited in the queue: created → started, or until now while it is still queued; null
 * for one that never started (created skipped, cancelled while queued).
 */
function queueWaitOf(row: Queued, now: number): ViewQueueWait | null {
  const queued = row.status === 'queued';
  const end = row.startedAt?.getTime() ?? (queued ? now : null);
  if (end === null) return null;
  return { waitedMs: Math.max(0, end - row.createdAt.getTime()), runsAhead: row.queuedAhead, queued };
}

/**
 * The sentence a page says of the suite run's or run's time in the queue, from what was recorded
 * when it was enqueued (the workspace's runs ahead of it); null when it never started. A wait too
 * short to matter, or one whose runs ahead were not recorded (older rows), is given without a
 * reason. A live page polls it (LiveStatus.queueWaitText), so the time still waiting moves on.
 */
export function queueWaitText(row: Queued, now = Date.now()): string | null {
  const wait = queueWaitOf(row, now);
  if (!wait) return null;
  const reason =
    wait.runsAhead !== null && (wait.queued || wait.waitedMs >= QUEUE_WAIT_WORTH_SAYING_MS)
      ? `: ${queueWaitWords({ runs_ahead: wait.runsAhead, reason: queueWaitReason(wait.runsAhead) })}`
      : '';
  const took = formatDuration(wait.waitedMs);
  return `${wait.queued ? `Waiting in the queue for ${took} so far` : `Waited ${took} in the queue`}${reason}.`;
}
