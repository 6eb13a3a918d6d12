// The API's surfaces besides creating runs: the listings' queries (with cursors forged from odd
// instants and ids), cancel and rerun, and the long poll's and conditional GET's headers.
import fc from 'fast-check';
import { ODD_STRINGS } from './odd';

/** What the fuzzer knows of its target: ids and slugs that exist, so some requests reach deep. */
export type FuzzWorld = {
  key: string;
  revokedKey: string;
  projectSlug: string;
  suiteSlug: string;
  testId: string;
  runId: string;
  suiteRunId: string;
  /** A real view path (with its token) and one with another id. */
  viewPaths: string[];
  /** The ETags the seed run and suite run had when the fuzzer started. */
  etags: string[];
};

/** Text as a query value: unreserved ASCII as is, every other UTF-8 byte percent-encoded. */
function queryEncoded(text: string): string {
  const unreserved = /[A-Za-z0-9\-._~]/;
  return [...Buffer.from(text, 'utf8')]
    .map((b) => {
      const char = String.fromCharCode(b);
      return unreserved.test(char) ? char : `%${b.toString(16).padStart(2, '0')}`;
    })
    .join('');
}

const INSTANTS = [
  '2026-01-01T00:00:00Z',
  '2026-01-01T00:00:00.123456789+05:30',
  '2016-12-31T23:59:60Z',
  '2016-12-31T23:59:60+01:00',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '2026-02-30T00:00:00Z',
  '2026-01-01T24:00:00Z',
  '2026-01-01t00:00:00z',
  '2026-01-01',
  '-000001-01-01T00:00:00Z',
  '+275760-09-13T00:00:00.000Z',
  '1e999',
  '',
];

/** Instants as a cursor holds them: what Date#toISOString writes, in and beyond Postgres's range. */
const CURSOR_INSTANTS = [
  '2026-01-01T00:00:00.000Z',
  '1970-01-01T00:00:00.000Z',
  '0000-01-01T00:00:00.000Z',
  '-271821-04-20T00:00:00.000Z',
  '+275760-09-13T00:00:00.000Z',
  '-004714-11-24T00:00:00.000Z',
  '2016-12-31T23:59:60.000Z',
  'x',
];

type Kind = 'runs' | 'suite-runs';

/** The filters key a listing binds its cursors to (as contracts' filterKey writes it), for these parameters. */
function filtersOf(kind: Kind, params: Array<[string, string]>): string {
  const filters = params.filter(([name]) => name !== 'cursor' && name !== 'limit');
  return JSON.stringify([kind, ...filters.sort(([a], [b]) => a.localeCompare(b))]);
}

/** A cursor: mostly one the listing could have written for these filters, around odd instants and ids. */
function cursorOf(world: FuzzWorld, kind: Kind, params: Array<[string, string]>): fc.Arbitrary<string> {
  const forged = fc
    .record({
      at: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom<unknown>(...CURSOR_INSTANTS) },
        fc.anything({ maxDepth: 1 }),
      ),
      id: fc.constantFrom<unknown>(world.runId, world.suiteRunId, 'x', ...ODD_STRINGS, 1, null),
      key: fc.oneof(
        { weight: 8, arbitrary: fc.constant(filtersOf(kind, params)) },
        fc.constantFrom(filtersOf(kind === 'runs' ? 'suite-runs' : 'runs', params), '', '[]'),
      ),
      extra: fc.constantFrom<unknown[]>([], [1]),
    })
    .map(({ at, id, key, extra }) => JSON.stringify([at, id, key, ...extra]));
  return fc.oneof(
    { weight: 8, arbitrary: forged.map((json) => Buffer.from(json).toString('base64url')) },
    forged.map((json) => Buffer.from(json).toString('base64')),
    fc.constantFrom('', 'x', '%%%', 'bnVsbA', 'W10', 'e30', 'a'.repeat(500), ...ODD_STRINGS),
  );
}

const LISTING_NAMES = [
  'projectSlug',
  'suiteSlug',
  'testId',
  'suiteRunId',
  'status',
  'createdAfter',
  'createdBefore',
  'limit',
];

/** A listing parameter's value: ones that exist or hold, and edge cases. */
function valueOf(world: FuzzWorld, name: string): fc.Arbitrary<string> {
  const odd = fc.constantFrom(...ODD_STRINGS);
  const known: Record<string, readonly string[]> = {
    projectSlug: [world.projectSlug, 'nope'],
    suiteSlug: [world.suiteSlug, 'nope'],
    testId: [world.testId, 'tst_00000000000000000000000000'],
    suiteRunId: [world.suiteRunId, world.runId],
    status: ['queued', 'passed,failed', 'passed,,failed', ',', 'PASSED', 'queued,queued', 'skipped,error,running'],
    createdAfter: INSTANTS,
    createdBefore: INSTANTS,
    limit: ['1', '20', '100', '0', '101', '007', '-1', '1.5', '1e2', '999'],
  };
  const values = Object.hasOwn(known, name) ? known[name] : undefined;
  return fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...(values ?? ['x'])) }, odd);
}

/** GET /api/v1/runs and /api/v1/suite-runs with a query of known, unknown and repeated parameters and a cursor. */
export function listingPath(world: FuzzWorld): fc.Arbitrary<string> {
  const param = fc
    .oneof(
      { weight: 12, arbitrary: fc.constantFrom(...LISTING_NAMES) },
      fc.constantFrom('colour', '__proto__', 'cursor[]', 'limit[x]', 'status[]', ''),
    )
    .chain((name) => valueOf(world, name).map((value): [string, string] => [name, value]));
  return fc
    .tuple(fc.constantFrom<Kind>('runs', 'suite-runs'), fc.array(param, { maxLength: 3 }), fc.nat(2))
    .chain(([kind, params, withCursor]) =>
      (withCursor > 0
        ? cursorOf(world, kind, params).map((c): Array<[string, string]> => [...params, ['cursor', c]])
        : fc.constant(params)
      ).map((all) => `/api/v1/${kind}?${all.map(([n, v]) => `${queryEncoded(n)}=${queryEncoded(v)}`).join('&')}`),
    );
}

/** The run and the suite run that exist: what a long poll and a conditional GET address. */
export function resourcePath(world: FuzzWorld): fc.Arbitrary<string> {
  return fc.constantFrom(`/api/v1/runs/${world.runId}`, `/api/v1/suite-runs/${world.suiteRunId}`);
}

/** POST cancel (a run or a suite run) and rerun (a suite run), on ids that exist and ones that do not. */
export function actionPath(world: FuzzWorld): fc.Arbitrary<string> {
  const id = fc.constantFrom(world.runId, world.suiteRunId, 'run_00000000000000000000000000', 'x', '%00', '%ZZ', '😀');
  return fc
    .tuple(
      fc.constantFrom('/api/v1/runs/{}/cancel', '/api/v1/suite-runs/{}/cancel', '/api/v1/suite-runs/{}/rerun'),
      id,
      fc.constantFrom('', '/', '?x=1'),
    )
    .map(([template, value, tail]) => template.replace('{}', value) + tail);
}

/**
 * `Prefer` and `If-None-Match` as a long poll sends them, and malformed. Waits stay at a second or
 * less so a case never outlives the fuzzer's 5 s read limit; a wait too long to read is ignored.
 */
export function conditionalHeaders(world: FuzzWorld): fc.Arbitrary<string[]> {
  const prefer = fc.constantFrom(
    'Prefer: wait=0',
    'Prefer: wait=1',
    'Prefer: wait="1"',
    'Prefer: WAIT = 1; x=y',
    'Prefer: return=minimal, wait=0',
    'Prefer: wait=-1',
    'Prefer: wait=abc',
    'Prefer: wait=1.5',
    'Prefer: wait=9999999999',
    `Prefer: wait=${'9'.repeat(400)}`,
    'Prefer: wait',
    'Prefer: ,,,',
    'Prefer: ',
  );
  const ifNoneMatch = fc.constantFrom(
    ...world.etags.map((etag) => `If-None-Match: ${etag}`),
    ...world.etags.map((etag) => `If-None-Match: W/${etag}, "other"`),
    'If-None-Match: "x"',
    'If-None-Match: W/"x"',
    'If-None-Match: "',
    'If-None-Match: ,',
    'If-None-Match: ',
    `If-None-Match: "${'e'.repeat(5_000)}"`,
  );
  // Each in about a third of the cases, so they do not crowd out the other headers.
  const sometimes = (header: fc.Arbitrary<string>) =>
    fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, header);
  return fc
    .tuple(sometimes(prefer), sometimes(ifNoneMatch))
    .map(([p, i]) => [p, i].filter((h): h is string => h !== undefined));
}
