import { queueWaitReason, type QueueWait } from '@testrun/contracts';

/**
 * SQL (on the row `alias`, a run or a suite run): the workspace's runs ahead of it when it was
 * enqueued (null when not recorded: a run created skipped, a row from before it was), and how long
 * it waited in the queue, in ms, from its creation to its start (null until it starts).
 */
export function queueWaitColumns(alias: string): string {
  return `${alias}.queued_ahead,
      CASE WHEN ${alias}.started_at IS NOT NULL
        THEN (extract(epoch FROM ${alias}.started_at - ${alias}.created_at) * 1000)::bigint END AS queue_waited_ms`;
}

/** A row's columns of {@link queueWaitColumns}, and its status. */
export type QueueWaitRow = {
  status: string;
  queued_ahead: number | null;
  queue_waited_ms: number | string | bigint | null;
};

/**
 * `{queue_wait}` of a run or suite run when it is known: once it started, or while it waits (then
 * without `waited_ms`, so the body, and its ETag, stay the same while it waits). Nothing for one
 * whose line was not recorded, or that left the queue without starting.
 */
export function queueWaitOf(row: QueueWaitRow): { queue_wait?: QueueWait } {
  if (row.queued_ahead === null) return {};
  if (row.queue_waited_ms === null && row.status !== 'queued') return {};
  return {
    queue_wait: {
      waited_ms: row.queue_waited_ms === null ? null : Math.max(0, Number(row.queue_waited_ms)),
      runs_ahead: row.queued_ahead,
      reason: queueWaitReason(row.queued_ahead),
    },
  };
}
