import { Type, type Static } from '@sinclair/typebox';
import { Nullable, RUN_STATUSES, type RunStatus } from './enums';
import { storableText, unstorableReason } from './limits';
import type { ProblemFieldError } from './problems';
import { Run, SuiteRun } from './runs';
import { compileValidator, escapePointer } from './validate';

/** Page size of a listing when the query gives none, and the most it may ask for. */
export const LISTING_LIMITS = { defaultLimit: 20, maxLimit: 100 } as const;

const slug = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const instant = (description: string) => Type.String({ format: 'date-time', description });

/** The query parameters both listings take. Every value arrives as text. */

/** The query fields every cursor-paged listing takes: the page size and the next page's cursor. */
export const PAGE_QUERY_FIELDS = {
  limit: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,3}$',
      description: `Page size, 1 to ${LISTING_LIMITS.maxLimit} (default ${LISTING_LIMITS.defaultLimit}).`,
    }),
  ),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 400, description: 'The next_cursor of the previous page, as it was.' }),
  ),
};

const commonQuery = {
  projectSlug: Type.Optional(slug('Only runs of this project.')),
  suiteSlug: Type.Optional(slug('Only runs of this suite of the project (needs projectSlug).')),
  status: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description: `Only these statuses, comma-separated (${RUN_STATUSES.join(', ')}).`,
    }),
  ),
  createdAfter: Type.Optional(instant('Only what was created at or after this instant (RFC 3339).')),
  createdBefore: Type.Optional(instant('Only what was created before this instant (RFC 3339).')),
  ...PAGE_QUERY_FIELDS,
};

export const RunListQuery = Type.Object(
  {
    ...commonQuery,
    testId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only runs of this test.' })),
    suiteRunId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Only the runs of this suite run.' }),
    ),
  },
  { additionalProperties: false },
);
export const SuiteRunListQuery = Type.Object(commonQuery, { additionalProperties: false });

const nextCursor = Nullable(
  Type.String({ description: 'Pass it as `cursor` for the next (older) page; null on the last page.' }),
);

export const RunList = Type.Object(
  { runs: Type.Array(Run, { description: 'Newest first.' }), next_cursor: nextCursor },
  { additionalProperties: false },
);
export type RunList = Static<typeof RunList>;

const { tests: _tests, ...suiteRunFields } = SuiteRun.properties;
/** A suite run in a listing: its counters and timings without the per-test entries, and what it ran. */
export const SuiteRunSummary = Type.Object(
  {
    ...suiteRunFields,
    project_slug: Type.String(),
    suite_slug: Type.String(),
    suite_name: Type.String(),
  },
  { additionalProperties: false },
);
export type SuiteRunSummary = Static<typeof SuiteRunSummary>;

export const SuiteRunList = Type.Object(
  { suite_runs: Type.Array(SuiteRunSummary, { description: 'Newest first.' }), next_cursor: nextCursor },
  { additionalProperties: false },
);
export type SuiteRunList = Static<typeof SuiteRunList>;

export const ProjectTest = Type.Object(
  { id: Type.String(), key: Type.String(), name: Type.String(), enabled: Type.Boolean() },
  { additionalProperties: false },
);
export const ProjectSuite = Type.Object(
  { id: Type.String(), slug: Type.String(), name: Type.String(), tests: Type.Array(ProjectTest) },
  { additionalProperties: false },
);
export const ProjectSummary = Type.Object(
  {
    id: Type.String(),
    slug: Type.String(),
    name: Type.String(),
    base_url: Type.String(),
    suites: Type.Array(ProjectSuite, { description: 'In the project file order; archived suites are left out.' }),
  },
  { additionalProperties: false },
);
export const ProjectList = Type.Object(
  { projects: Type.Array(ProjectSummary, { description: 'By slug.' }) },
  { additionalProperties: false },
);
export type ProjectList = Static<typeof ProjectList>;

/** A listing's filters and page, checked. */
export interface ListingQuery {
  projectSlug: string | null;
  suiteSlug: string | null;
  testId: string | null;
  suiteRunId: string | null;
  statuses: RunStatus[];
  createdAfter: Date | null;
  createdBefore: Date | null;
  limit: number;
  /** Where the previous page ended: created_at and id of its last item. */
  after: { createdAt: Date; id: string } | null;
  /** The listing and its filters as one string: what a cursor of this listing is bound to. */
  filters: string;
}

export type ListingQueryResult = { ok: true; value: ListingQuery } | { ok: false; errors: ProblemFieldError[] };

const validators = { runs: compileValidator(RunListQuery), 'suite-runs': compileValidator(SuiteRunListQuery) };

/**
 * Checks a listing's query string (Express's parsed `req.query`). A parameter given twice, an
 * unknown one, a bad status or instant, a limit out of range, suiteSlug without projectSlug, or a
 * cursor that is not one this listing gave for the same filters: each is reported with its path.
 */
export function parseListingQuery(kind: 'runs' | 'suite-runs', query: Record<string, unknown>): ListingQueryResult {
  const errors: ProblemFieldError[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (typeof value !== 'string')
      errors.push({ path: storableText(`/${escapePointer(name)}`), message: 'must be given once, as plain text' });
  }
  if (errors.length > 0) return { ok: false, errors };
  const shape = validators[kind](query);
  if (!shape.ok) return { ok: false, errors: shape.errors };
  const q = shape.value as Static<typeof RunListQuery>;
  if (q.suiteSlug !== undefined && q.projectSlug === undefined)
    errors.push({ path: '/suiteSlug', message: 'requires projectSlug' });
  const statuses = q.status === undefined ? [] : [...new Set(q.status.split(','))];
  for (const s of statuses) {
    if (!(RUN_STATUSES as readonly string[]).includes(s))
      errors.push({ path: '/status', message: `"${s}" is not one of ${RUN_STATUSES.join(', ')}` });
  }
  const limit = q.limit === undefined ? LISTING_LIMITS.defaultLimit : Number(q.limit);
  if (limit < 1 || limit > LISTING_LIMITS.maxLimit)
    errors.push({ path: '/limit', message: `must be between 1 and ${LISTING_LIMITS.maxLimit}` });
  const createdAfter = instantOf(q.createdAfter);
  const createdBefore = instantOf(q.createdBefore);
  for (const [name, at] of [
    ['createdAfter', createdAfter],
    ['createdBefore', createdBefore],
  ] as const) {
    if (at === 'invalid') errors.push({ path: `/${name}`, message: 'must be an instant without a leap second (:60)' });
  }
  const filters = filterKey(kind, q);
  const after = q.cursor === undefined ? null : readCursor(q.cursor, filters);
  if (after === 'invalid') errors.push({ path: '/cursor', message: 'is not a cursor this listing gave' });
  if (after === 'other')
    errors.push({ path: '/cursor', message: 'belongs to a listing with other filters; keep the filters of its page' });
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: {
      projectSlug: q.projectSlug ?? null,
      suiteSlug: q.suiteSlug ?? null,
      testId: q.testId ?? null,
      suiteRunId: q.suiteRunId ?? null,
      statuses: statuses as RunStatus[],
      createdAfter: createdAfter === 'invalid' ? null : createdAfter,
      createdBefore: createdBefore === 'invalid' ? null : createdBefore,
      limit,
      after: after === null || typeof after === 'string' ? null : after,
      filters,
    },
  };
}

/**
 * The instant of a `date-time` the schema let through, or 'invalid' for one no Date holds: RFC 3339
 * allows a leap second (`23:59:60`), which neither JavaScript nor Postgres can represent.
 */
function instantOf(text: string | undefined): Date | null | 'invalid' {
  if (text === undefined) return null;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? 'invalid' : at;
}

/** The filters a cursor is bound to, as one string (the page size may change between pages). */
function filterKey(kind: string, q: Static<typeof RunListQuery>): string {
  const { cursor: _cursor, limit: _limit, ...filters } = q;
  return JSON.stringify([kind, ...Object.entries(filters).sort(([a], [b]) => a.localeCompare(b))]);
}

/** A cursor: where a page ended, and the filters of its listing, base64url-encoded JSON. */
export function writeCursor(query: Pick<ListingQuery, 'filters'>, last: { createdAt: Date; id: string }): string {
  return Buffer.from(JSON.stringify([last.createdAt.toISOString(), last.id, query.filters])).toString('base64url');
}

/** Where the page of `cursor` ended, if it is one a listing of these `filters` gave. */
export function readCursor(cursor: string, filters: string): { createdAt: Date; id: string } | 'invalid' | 'other' {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return 'invalid';
  }
  if (!Array.isArray(decoded) || decoded.length !== 3) return 'invalid';
  const [at, id, key] = decoded as unknown[];
  if (typeof at !== 'string' || typeof id !== 'string' || typeof key !== 'string') return 'invalid';
  // Only what writeCursor writes: a created_at, so a four-digit year (a Date outside years 0 to 9999
  // writes a six-digit one, which may lie beyond Postgres's range), and an id Postgres can compare.
  const createdAt = new Date(at);
  if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== at || !/^\d{4}-/.test(at)) return 'invalid';
  if (unstorableReason(id) !== null) return 'invalid';
  return key === filters ? { createdAt, id } : 'other';
}
