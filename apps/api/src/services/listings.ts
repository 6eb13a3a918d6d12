import { createHash } from 'node:crypto';
import { writeCursor, type ListingQuery, type RunList, type SuiteRunList } from '@testrun/contracts';
import { readSql, type Db } from '@testrun/core/db';
import {
  RUN_COLUMNS,
  SUITE_RUN_COLUMNS,
  toRun,
  toSuiteRunSummary,
  type RunRow,
  type SuiteRunRow,
} from '@testrun/core/runs';
import type { DerivedKeys } from '@testrun/core/secrets';
import type { ViewLinkConfig } from '@testrun/core/view-links';
import { ApiError } from '../errors';

/**
 * The SQL of one page, newest first, and its parameters. Every filter is an equality on a column
 * that leads an index ending in (created_at, id), so Postgres reads the page straight off that
 * index. Several statuses are one ordered index scan each, merged (UNION ALL of LIMITed legs):
 * `status = ANY(…)` would make Postgres sort every matching row before it could stop.
 */
function pageSql(
  table: 'runs r' | 'suite_runs s',
  columns: string,
  joins: string,
  conditions: Array<[string, unknown]>,
  query: ListingQuery,
): { text: string; values: unknown[] } {
  const alias = table.endsWith(' r') ? 'r' : 's';
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const where = conditions.map(([sql, value]) => sql.replace('?', param(value)));
  if (query.createdAfter) where.push(`${alias}.created_at >= ${param(query.createdAfter)}`);
  if (query.createdBefore) where.push(`${alias}.created_at < ${param(query.createdBefore)}`);
  if (query.after) {
    where.push(`(${alias}.created_at, ${alias}.id) < (${param(query.after.createdAt)}, ${param(query.after.id)})`);
  }
  // One row more than the page: whether it exists says whether there is a next page.
  const limit = param(query.limit + 1);
  const order = `ORDER BY ${alias}.created_at DESC, ${alias}.id DESC LIMIT ${limit}`;
  const leg = (status: string | null) =>
    `SELECT ${columns} FROM ${table} ${joins} WHERE ${[...where, ...(status ? [`${alias}.status = ${status}::"RunStatus"`] : [])].join(' AND ')} ${order}`;
  if (query.statuses.length <= 1) {
    const status = query.statuses[0];
    return { text: leg(status === undefined ? null : param(status)), values };
  }
  const legs = query.statuses.map((s) => `(${leg(param(s))})`).join(' UNION ALL ');
  return { text: `SELECT * FROM (${legs}) page ORDER BY created_at DESC, id DESC LIMIT ${limit}`, values };
}

/** The page of rows read with one extra (see pageSql), and the cursor after it when there is more. */
function pageOf<Row extends { created_at: Date; id: string }>(
  rows: Row[],
  query: ListingQuery,
): { page: Row[]; next_cursor: string | null } {
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  const more = rows.length > query.limit && last !== undefined;
  return { page, next_cursor: more ? writeCursor(query, { createdAt: last.created_at, id: last.id }) : null };
}

/** A statement's name for the prepared-statement cache: one per shape of query. */
const statementName = (prefix: string, text: string) =>
  `${prefix}_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;

/** The ids of the project (and suite) a listing is filtered by, or 404 naming the one that is unknown. */
async function scopeIds(
  db: Db,
  workspaceId: string,
  query: ListingQuery,
): Promise<{ projectId: string | null; suiteId: string | null }> {
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
  const { projectId, suiteId } = await scopeIds(db, workspaceId, query);
  const conditions: Array<[string, unknown]> = [['r.workspace_id = ?', workspaceId]];
  if (suiteId) conditions.push(['r.suite_id = ?', suiteId]);
  else if (projectId) conditions.push(['r.project_id = ?', projectId]);
  if (query.testId) conditions.push(['r.test_id = ?', query.testId]);
  if (query.suiteRunId) conditions.push(['r.suite_run_id = ?', query.suiteRunId]);
  const { text, values } = pageSql(
    'runs r',
    RUN_COLUMNS,
    'LEFT JOIN suite_runs s ON s.id = r.suite_run_id',
    conditions,
    query,
  );
  const rows = await readSql<RunRow>(db, statementName('list_runs', text), text, values);
  const { page, next_cursor } = pageOf(rows, query);
  return { runs: page.map(toRun), next_cursor };
}

/** GET /api/v1/suite-runs: a page of the workspace's suite runs, newest first, without their tests. */
export async function listSuiteRuns(
  db: Db,
  keys: DerivedKeys,
  links: ViewLinkConfig,
  workspaceId: string,
  query: ListingQuery,
): Promise<SuiteRunList> {
  const { projectId, suiteId } = await scopeIds(db, workspaceId, query);
  const conditions: Array<[string, unknown]> = [['s.workspace_id = ?', workspaceId]];
  if (suiteId) conditions.push(['s.suite_id = ?', suiteId]);
  else if (projectId) conditions.push(['s.project_id = ?', projectId]);
  const { text, values } = pageSql(
    'suite_runs s',
    `${SUITE_RUN_COLUMNS}, p.slug AS project_slug, su.slug AS suite_slug, su.name AS suite_name`,
    'JOIN suites su ON su.id = s.suite_id JOIN projects p ON p.id = s.project_id',
    conditions,
    query,
  );
  type Row = SuiteRunRow & { project_slug: string; suite_slug: string; suite_name: string };
  const rows = await readSql<Row>(db, statementName('list_suite_runs', text), text, values);
  const { page, next_cursor } = pageOf(rows, query);
  return {
    suite_runs: page.map((row) => ({
      ...toSuiteRunSummary(keys, links, row),
      project_slug: row.project_slug,
      suite_slug: row.suite_slug,
      suite_name: row.suite_name,
    })),
    next_cursor,
  };
}
