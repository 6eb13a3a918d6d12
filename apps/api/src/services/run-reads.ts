import type { Db } from '@testrun/core/db';
import { readRun, type RunRead } from '@testrun/core/runs';
import { ApiError } from '../errors';

/** One run of the workspace as the contract's Run, or 404 (the same for foreign and unknown ids). */
export async function getRun(db: Db, workspaceId: string, runId: string): Promise<RunRead> {
  const read = await readRun(db, workspaceId, runId);
  if (!read) throw new ApiError('not_found', `No run "${runId}" in this workspace.`);
  return read;
}
