import type { Db, DbTx } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import { cancelRuns, publishRunCancels, type CancelResult } from '@testrun/core/runs';
import type { ApiRedis } from '../redis';
import { ApiError, errorMessage } from '../errors';

/** What a cancel addresses: one run, or every child of a suite run. */
export type CancelTarget = { kind: 'run' | 'suite-run'; id: string };

/**
 * Cancels a run or every child of a suite run, in the key's workspace (404 otherwise): queued runs
 * end `skipped` now, running ones are marked in Postgres and their workers told through Redis.
 * Repeating it changes nothing more. A Redis failure is logged, not answered: the mark in Postgres
 * makes the reconciler end those runs within a few seconds anyway.
 */
export async function cancelTarget(
  deps: { db: Db; redis: ApiRedis; redisPrefix: string; logger: Logger },
  workspaceId: string,
  target: CancelTarget,
): Promise<CancelResult> {
  const result = await deps.db.$transaction(async (tx) => {
    const runIds =
      target.kind === 'run'
        ? (
            await tx.$queryRaw<Array<{ id: string }>>`
              SELECT id FROM runs WHERE id = ${target.id} AND workspace_id = ${workspaceId}`
          ).map((r) => r.id)
        : await suiteRunChildren(tx, workspaceId, target.id);
    if (target.kind === 'run' && runIds.length === 0)
      throw new ApiError('not_found', `No run "${target.id}" in this workspace.`);
    return cancelRuns(tx, workspaceId, runIds);
  });
  try {
    await publishRunCancels(deps.redis, deps.redisPrefix, result.stopping);
  } catch (e) {
    deps.logger.warn('could not tell the workers to stop cancelled runs; the reconciler will end them', {
      runIds: result.stopping,
      error: errorMessage(e),
    });
  }
  return result;
}

async function suiteRunChildren(tx: DbTx, workspaceId: string, suiteRunId: string): Promise<string[]> {
  const [suiteRun] = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM suite_runs WHERE id = ${suiteRunId} AND workspace_id = ${workspaceId}`;
  if (!suiteRun) throw new ApiError('not_found', `No suite run "${suiteRunId}" in this workspace.`);
  const children = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM runs WHERE suite_run_id = ${suiteRunId} AND status IN ('queued', 'running')`;
  return children.map((r) => r.id);
}
