import type { ListingQuery, RunList, SuiteRunList } from '@testrun/contracts';
import { readSql, type Db } from '@testrun/core/db';
import { readRunPage, readSuiteRunPage, type ListingScope } from '@testrun/core/runs';
import type { DerivedKeys } from '@testrun/core/secrets';
import type { ViewLinkConfig } from '@testrun/core/view-links';
import { ApiError } from '../errors';

/** The ids of the project (and suite) a listing is filtered by, or 404 naming the one that is unknown. */
async function scopeIds(db: Db, workspaceId: string, query: ListingQuery): Promise<ListingScope> {
  if (query.projectSlug === null) return { projectId: null, suiteId: null };
  const rows = await readSql<{ project_id: string; suite_id: string | null }>(
    db,
    'listing_scope',
    `SELECT p.id AS project_id, su.id AS suite_id FROM projects p
      LEFT JOIN suites su ON su.project_id = p.id AND su.slug = $3
      WHERE p.workspace_id = $1 AND p.slug = $2`,
    [workspaceId, query.projectSlug, query.suiteSlug ?? ''],
  );
  const row = rows[0];
  if (!row) throw new ApiError('not_found', `No project "${query.projectSlug}" in this workspace.`);
  if (query.suiteSlug !== null && row.suite_id === null)
    throw new ApiError('not_found', `No suite "${query.suiteSlug}" in project "${query.projectSlug}".`);
  return { projectId: row.project_id, suiteId: row.suite_id };
}

/** GET /api/v1/runs: a page of the workspace's runs, newest first. */
export async function listRuns(db: Db, workspaceId: string, query: ListingQuery): Promise<RunList> {
  return readRunPage(db, workspaceId, await scopeIds(db, workspaceId, query), query);
}

/** GET /api/v1/suite-runs: a page of the workspace's suite runs, newest first, without their tests. */
export async function listSuiteRuns(
  db: Db,
  keys: DerivedKeys,
  links: ViewLinkConfig,
  workspaceId: string,
  query: ListingQuery,
): Promise<SuiteRunList> {
  return readSuiteRunPage(db, keys, links, workspaceId, await scopeIds(db, workspaceId, query), query);
}
