// Cancelling runs: the state moves (with the suite counters, by the same SQL as every other move)
// and the Redis channel on which a cancel reaches the worker that runs a run.
import type { Redis } from 'ioredis';
import type { AbortOutcome } from './state';
import { MOVED_COLUMNS, SUITE_MOVE } from './state';
import type { DbTx } from '../db';

/** The result_summary of a run cancelled before a worker started it. */
export const CANCELLED_QUEUED_SUMMARY = 'Skipped: cancelled before it started.';

/** What ends a run cancelled while it was running: by its worker, or by the reconciler when the worker missed the message. */
export const CANCELLED_RUNNING_OUTCOME: AbortOutcome = {
  code: 'cancelled',
  message: 'the run was cancelled while it was running',
  resultSummary: 'Error: cancelled while running.',
};

/** What one cancel did: runs ended `skipped` now, and running runs whose worker is being told to stop. */
export type CancelResult = { skipped: string[]; stopping: string[] };

/**
 * Cancels the runs of `runIds` that are still open in the workspace: a `queued` run ends `skipped`
 * (`cancelled`) here, its suite counters moved in the same statement; a `running` run is marked
 * (`cancel_requested_at`) for its worker, which the caller then tells through
 * {@link publishRunCancels}. Terminal runs and ids of other workspaces are left alone, so a cancel
 * can be repeated. Every run is locked first (in id order) and the suite run after, the order a
 * worker's own writes take, so a cancel never deadlocks with them or with another cancel.
 * Call it inside a transaction.
 */
export async function cancelRuns(tx: DbTx, workspaceId: string, runIds: readonly string[]): Promise<CancelResult> {
  if (runIds.length === 0) return { skipped: [], stopping: [] };
  const open = await tx.$queryRaw<Array<{ id: string; status: 'queued' | 'running' }>>`
    SELECT id, status::text AS status FROM runs
    WHERE id = ANY(${runIds}::text[]) AND workspace_id = ${workspaceId} AND status IN ('queued', 'running')
    ORDER BY id FOR UPDATE`;
  const skipped: string[] = [];
  const stopping: string[] = [];
  for (const run of open) {
    if (run.status === 'running') {
      stopping.push(run.id);
      continue;
    }
    // One statement per run: SUITE_MOVE moves one child per suite run and statement.
    const moved = await tx.$queryRawUnsafe<Array<{ id: string }>>(
      `WITH p AS (SELECT id, status AS prev_status FROM runs WHERE id = $1),
       u AS (
         UPDATE runs r SET status = 'skipped'::"RunStatus", skip_reason = $2::"SkipReason", result_summary = $3,
           finished_at = now(), headers_sealed = NULL, variables_sealed = NULL, cancel_requested_at = now()
         FROM p WHERE r.id = p.id AND r.status = 'queued'
         RETURNING ${MOVED_COLUMNS}),
       s AS (${SUITE_MOVE} RETURNING s.id)
       SELECT u.id FROM u`,
      run.id,
      'cancelled',
      CANCELLED_QUEUED_SUMMARY,
    );
    if (moved.length > 0) skipped.push(run.id);
  }
  if (stopping.length > 0) {
    await tx.$executeRaw`
      UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, now())
      WHERE id = ANY(${stopping}::text[]) AND status = 'running'`;
  }
  return { skipped, stopping };
}

/** The Redis pub/sub channel of cancels, under the deployment's REDIS_PREFIX. */
export function runCancelChannel(redisPrefix: string): string {
  return `${redisPrefix}:run-cancel`;
}

/**
 * Tells every worker that the runs must stop: one message, the run ids separated by spaces. The
 * worker that runs one closes its context; the others ignore it. Postgres holds the request too
 * (cancel_requested_at), so a message that is lost only delays the stop until the reconciler's pass.
 */
export async function publishRunCancels(redis: Redis, redisPrefix: string, runIds: readonly string[]): Promise<void> {
  if (runIds.length === 0) return;
  await redis.publish(runCancelChannel(redisPrefix), runIds.join(' '));
}

/** The run ids of a message of {@link publishRunCancels}. */
export function readRunCancels(message: string): string[] {
  return message.split(' ').filter((id) => id.length > 0);
}

/** What a cancel addresses: one run, or every child of a suite run. */
export type CancelTarget = { kind: 'run' | 'suite-run'; id: string };

/**
 * The runs a cancel of `target` addresses in the workspace: the run itself, or the suite run's
 * children still queued or running. Null when the workspace has no such run or suite run.
 */
export async function cancelTargetRunIds(
  tx: DbTx,
  workspaceId: string,
  target: CancelTarget,
): Promise<string[] | null> {
  if (target.kind === 'run') {
    const rows = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT id FROM runs WHERE id = ${target.id} AND workspace_id = ${workspaceId}`;
    return rows.length > 0 ? rows.map((r) => r.id) : null;
  }
  const [suiteRun] = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM suite_runs WHERE id = ${target.id} AND workspace_id = ${workspaceId}`;
  if (!suiteRun) return null;
  const children = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM runs WHERE suite_run_id = ${target.id} AND status IN ('queued', 'running')`;
  return children.map((r) => r.id);
}
