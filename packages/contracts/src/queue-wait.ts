import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './enums';

/**
 * Why a run (or a suite run's first run) waited in the queue, from what the service recorded when
 * it was enqueued. Runs of a workspace start in the order they were enqueued, every workspace's
 * first waiting run before any workspace's next (docs/WORKER.md, "Fair sharing between workspaces"):
 * a run behind runs of its own workspace waits for them; one first in its workspace's line waits
 * only for a worker slot (every slot busy with other runs, or no worker running).
 */
export const QUEUE_WAIT_REASONS = ['workspace_runs_ahead', 'waiting_for_worker'] as const;
export type QueueWaitReason = (typeof QUEUE_WAIT_REASONS)[number];

export const QueueWait = Type.Object(
  {
    waited_ms: Nullable(
      Type.Integer({
        minimum: 0,
        description:
          'From created_at to started_at; null while it is still queued (the body stays the same while it waits, so its ETag does).',
      }),
    ),
    runs_ahead: Type.Integer({
      minimum: 0,
      description:
        "The workspace's runs queued or running ahead of it when it was enqueued (those of the same request before it included).",
    }),
    reason: Type.Union(
      QUEUE_WAIT_REASONS.map((r) => Type.Literal(r)),
      {
        description:
          '`workspace_runs_ahead` when runs_ahead > 0 (it waited for those first), else `waiting_for_worker` (first of its workspace in line, it waited for a free worker slot).',
      },
    ),
  },
  {
    additionalProperties: false,
    description:
      'How long it waited in the queue and why; absent for one created skipped, one that left the queue without starting, and rows from before this was recorded.',
  },
);
export type QueueWait = Static<typeof QueueWait>;

/** The reason for a wait behind `runsAhead` runs of the workspace. */
export function queueWaitReason(runsAhead: number): QueueWaitReason {
  return runsAhead > 0 ? 'workspace_runs_ahead' : 'waiting_for_worker';
}

/** The shortest wait in the queue whose reason is worth saying: below it a worker simply took the run. */
export const QUEUE_WAIT_WORTH_SAYING_MS = 1_000;

/**
 * The words for a wait's reason, as the view and `testrun run` say it: `behind 12 runs of its
 * workspace enqueued before it`, or `first of its workspace in line: every worker slot busy or no
 * worker running`.
 */
export function queueWaitWords(wait: Pick<QueueWait, 'runs_ahead' | 'reason'>): string {
  if (wait.reason === 'workspace_runs_ahead')
    return `behind ${wait.runs_ahead} run${wait.runs_ahead === 1 ? '' : 's'} of its workspace enqueued before it`;
  return 'first of its workspace in line: every worker slot busy or no worker running';
}
