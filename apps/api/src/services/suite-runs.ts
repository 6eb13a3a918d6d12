import type { SuiteRun } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import { readSuiteRun } from '@testrun/core/runs';
import type { DerivedKeys } from '@testrun/core/secrets';
import type { ViewLinkConfig } from '@testrun/core/view-links';
import { ApiError } from '../errors';

/** One suite run of the workspace with its children, or 404 (the same for foreign and unknown ids). */
export async function getSuiteRun(
  db: Db,
  keys: DerivedKeys,
  links: ViewLinkConfig,
  workspaceId: string,
  suiteRunId: string,
): Promise<SuiteRun> {
  const suiteRun = await readSuiteRun(db, keys, links, workspaceId, suiteRunId);
  if (!suiteRun) throw new ApiError('not_found', `No suite run "${suiteRunId}" in this workspace.`);
  return suiteRun;
}
