import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import {
  cancelRuns,
  cancelTargetRunIds,
  publishRunCancels,
  type CancelResult,
  type CancelTarget,
} from '@testrun/core/runs';
import type { ApiRedis } from '../redis';
import { ApiError, errorMessage } from '../errors';

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
    const runIds = await cancelTargetRunIds(tx, workspaceId, target);
    if (runIds === null) {
      const what = target.kind === 'run' ? 'run' : 'suite run';
      throw new ApiError('not_found', `No ${what} "${target.id}" in this workspace.`);
    }
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
