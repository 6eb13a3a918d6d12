// The pages of GET /api/v1/runs and GET /api/v1/suite-runs, newest first, with their cursors.
import { createHash } from 'node:crypto';
import { writeCursor, type ListingQuery, type RunList, type SuiteRunList } from '@testrun/contracts';
import { readSql, type Db } from '../db';
import type { DerivedKeys } from '../secrets/seal';
import type { ViewLinkConfig } from '../view-links';
import { RUN_COLUMNS, SUITE_RUN_COLUMNS, toRun, toSuiteRunSummary, type RunRow, type SuiteRunRow } from './reads';

/** What a listing is narrowed to besides its query: the ids of the project and suite it names. */
export type ListingScope = { projectId: string | null; suiteId: string | null };

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

/** A page of the workspace's runs, newest first. */
export async function readRunPage(
  db: Db,
  workspaceId: string,
  scope: ListingScope,
  query: ListingQuery,
): Promise<RunList> {
  const conditions: Array<[string, unknown]> = [['r.workspace_id = ?', workspaceId]];
  if (scope.suiteId) conditions.push(['r.suite_id = ?', scope.suiteId]);
  else if (scope.projectId) conditions.push(['r.project_id = ?', scope.projectId]);
  // A test's id, or the id of a copy merged into it (test_aliases): that test's runs.
  if (query.testId)
    conditions.push([
      'r.test_id = (SELECT COALESCE(max(a.test_id), x.id) FROM (SELECT ?::text AS id) x LEFT JOIN test_aliases a ON a.id = x.id GROUP BY x.id)',
      query.testId,
    ]);
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

/** A page of the workspace's suite runs, newest first, without their tests. */
export async function readSuiteRunPage(
  db: Db,
  keys: DerivedKeys,
  links: ViewLinkConfig,
  workspaceId: string,
  scope: ListingScope,
  query: ListingQuery,
): Promise<SuiteRunList> {
  const conditions: Array<[string, unknown]> = [['s.workspace_id = ?', workspaceId]];
  if (scope.suiteId) conditions.push(['s.suite_id = ?', scope.suiteId]);
  else if (scope.projectId) conditions.push(['s.project_id = ?', scope.projectId]);
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
