import fc from 'fast-check';
import { RunCreateRequest, SuiteRunRerunRequest } from '@testrun/contracts';
import { ODD_STRINGS, ODD_URLS, percentEncoded } from './odd';
import { arbitraryOf } from './schema-arbitrary';
import { actionPath, conditionalHeaders, listingPath, resourcePath, type FuzzWorld } from './surfaces';

/** One request as bytes on the wire, with what it is for the report. */
export type FuzzCase = {
  label: string;
  method: string;
  path: string;
  bytes: Buffer;
  /** The body framing promises more bytes than are sent, so the request never completes. */
  incomplete: boolean;
};

/** A field's text when it is one, else a slug that exists. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : 'shop';
}

function inject(text: string): fc.Arbitrary<string> {
  return fc
    .tuple(fc.nat({ max: text.length }), fc.constantFrom(...ODD_STRINGS))
    .map(([at, odd]) => text.slice(0, at) + odd + text.slice(at));
}

/** A JSON body from the contract's schema, with hints so that many address real things. */
function bodyValue(world: FuzzWorld): fc.Arbitrary<unknown> {
  const hints = {
    testId: [world.testId, 'tst_00000000000000000000000000'],
    projectSlug: [world.projectSlug, 'nope'],
    suiteSlug: [world.suiteSlug, 'nope'],
    baseUrl: ODD_URLS,
    'headers.name': ['X-Test', 'Authorization', 'Cookie', 'Host', 'x\u0000y', 'Transfer-Encoding'],
  };
  // A rerun's body as well, for the rerun URLs.
  return fc.oneof(
    { weight: 3, arbitrary: arbitraryOf(RunCreateRequest, hints) },
    arbitraryOf(SuiteRunRerunRequest, hints),
  );
}

/** Mutations of a JSON value: wrong types, missing and extra fields, huge and odd strings, deep nesting. */
function mutated(value: fc.Arbitrary<unknown>): fc.Arbitrary<{ label: string; json: unknown }> {
  const asObject = (v: unknown): Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? { ...(v as Record<string, unknown>) } : {};
  const field = fc.constantFrom(
    'testId',
    'projectSlug',
    'suiteSlug',
    'baseUrl',
    'headers',
    'extra',
    '__proto__',
    'constructor',
    'only',
  );
  return fc.oneof(
    value.map((json) => ({ label: 'schema', json })),
    fc
      .tuple(value, field, fc.anything())
      .map(([v, f, any]) => ({ label: 'wrong-type', json: { ...asObject(v), [f]: any } })),
    fc.tuple(value, field).map(([v, f]) => ({
      label: 'missing-field',
      json: Object.fromEntries(Object.entries(asObject(v)).filter(([name]) => name !== f)),
    })),
    fc
      .tuple(value, fc.string({ maxLength: 30 }), fc.jsonValue({ maxDepth: 2 }))
      .map(([v, f, x]) => ({ label: 'extra-field', json: { ...asObject(v), [f]: x } })),
    fc
      .tuple(value, field, fc.integer({ min: 1_000, max: 400_000 }))
      .map(([v, f, n]) => ({ label: 'huge-string', json: { ...asObject(v), [f]: 'x'.repeat(n) } })),
    fc.tuple(value, fc.integer({ min: 1_000, max: 60_000 })).map(([v, n]) => ({
      label: 'huge-array',
      json: { ...asObject(v), headers: Array.from({ length: n }, () => 1) },
    })),
    fc.tuple(value, field, fc.constantFrom(...ODD_STRINGS)).chain(([v, f, odd]) =>
      inject(textOf(asObject(v)[f])).map((s) => ({
        label: 'odd-string',
        json: { ...asObject(v), [f]: s + odd },
      })),
    ),
    fc
      .tuple(value, fc.constantFrom(...ODD_STRINGS))
      .map(([v, odd]) => ({ label: 'odd-name', json: { ...asObject(v), [`h${odd}`]: 'v' } })),
    fc.tuple(value, fc.constantFrom(...ODD_STRINGS)).map(([v, odd]) => ({
      label: 'odd-header',
      json: { ...asObject(v), headers: { [`X-${odd}`]: odd, 'X-A': odd } },
    })),
    fc
      .tuple(value, fc.constantFrom(...ODD_URLS))
      .map(([v, url]) => ({ label: 'odd-url', json: { ...asObject(v), baseUrl: url } })),
  );
}

/** Body bytes: JSON of a (mutated) value, or broken text. */
function bodyBytes(world: FuzzWorld): fc.Arbitrary<{ label: string; body: Buffer }> {
  const json = mutated(bodyValue(world)).map(({ label, json: j }) => ({
    label,
    body: Buffer.from(JSON.stringify(j === undefined ? null : j)),
  }));
  return fc.oneof(
    { weight: 6, arbitrary: json },
    fc
      .integer({ min: 100, max: 200_000 })
      .map((n) => ({ label: 'deep-nesting', body: Buffer.from('['.repeat(n) + ']'.repeat(n)) })),
    fc
      .integer({ min: 100, max: 50_000 })
      .map((n) => ({ label: 'deep-object', body: Buffer.from('{"a":'.repeat(n) + '1' + '}'.repeat(n)) })),
    fc
      .tuple(
        json,
        fc.nat(),
        fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0xaf], [0x00]),
      )
      .map(([j, at, bad]) => {
        const cut = at % (j.body.length + 1);
        return {
          label: 'invalid-utf8',
          body: Buffer.concat([j.body.subarray(0, cut), Buffer.from(bad), j.body.subarray(cut)]),
        };
      }),
    json.chain((j) =>
      fc.nat({ max: j.body.length }).map((n) => ({ label: 'truncated-json', body: j.body.subarray(0, n) })),
    ),
    fc
      .constantFrom(
        '',
        'null',
        '[]',
        '"x"',
        '1e999',
        '{"testId":"a","testId":"b"}',
        '\ufeff{"projectSlug":"shop"}',
        'not json',
        '{,}',
      )
      .map((t) => ({ label: 'odd-json', body: Buffer.from(t) })),
    fc.uint8Array({ maxLength: 300 }).map((b) => ({ label: 'random-bytes', body: Buffer.from(b) })),
  );
}

function pathOf(world: FuzzWorld): fc.Arbitrary<string> {
  const ids = [
    world.runId,
    world.suiteRunId,
    'run_00000000000000000000000000',
    'x',
    '%ZZ',
    '%00',
    '%E0%A4%A',
    '%ED%A0%80',
    '..',
    'a'.repeat(5_000),
    '%2F',
    '😀',
    '\u00e9',
  ];
  return fc.oneof(
    fc.constantFrom(
      '/',
      '/healthz',
      '/readyz',
      '/api/v1/runs',
      '/api/v1/runs/',
      '/api/v1/openapi.json',
      '/api/v1/problems/invalid_body',
      '/api/v1/problems/%ZZ',
      '*',
      'http://a/api/v1/runs',
      '//api/v1/runs',
      '/api/v1/../v1/runs',
      '/api/v2/runs',
      ...world.viewPaths,
    ),
    fc
      .tuple(
        fc.constantFrom(
          '/api/v1/runs/',
          '/api/v1/suite-runs/',
          '/view/runs/',
          '/view/suite-runs/',
          '/view/',
          '/view/runs/' + world.runId + '/',
          '/api/v1/problems/',
        ),
        fc.constantFrom(...ids),
      )
      .map(([a, b]) => a + b),
    fc
      .tuple(
        fc.constantFrom(...world.viewPaths, '/api/v1/runs/' + world.runId),
        fc.constantFrom(...ODD_STRINGS, '%ZZ', '%00', 'a'.repeat(3000)),
      )
      .map(([p, s]) => `${p}/${percentEncoded(s)}`),
    fc
      .tuple(
        fc.constantFrom('/healthz', '/api/v1/runs/' + world.runId, ...world.viewPaths),
        fc.constantFrom(
          '?x=%00',
          '?x=%ZZ',
          '?a=1&a=2',
          '?__proto__[x]=1',
          '?' + 'q'.repeat(8_000),
          '?x=%ED%A0%80',
          '?trace=http://evil.test/t.zip',
        ),
      )
      .map(([p, q]) => p + q),
  );
}

function authorization(world: FuzzWorld): fc.Arbitrary<readonly string[]> {
  const others: fc.Arbitrary<readonly string[]> = fc.constantFrom<readonly string[]>(
    [],
    [`Authorization: Bearer ${world.revokedKey}`],
    ['Authorization: Bearer trk_nope'],
    ['Authorization: Basic dXNlcjpwYXNz'],
    ['Authorization: Bearer'],
    ['Authorization: '],
    [`Authorization: bearer   ${world.key}  `],
    [`Authorization: Bearer ${world.key}`, 'Authorization: Bearer trk_other'],
    [`Authorization: Bearer ${'a'.repeat(9_000)}`],
    [`Authorization: Bearer ${world.key}\u00e9`],
  );
  const valid: fc.Arbitrary<readonly string[]> = fc.constant([`Authorization: Bearer ${world.key}`]);
  return fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: others });
}

function otherHeaders(world: FuzzWorld): fc.Arbitrary<string[]> {
  const idem = fc.oneof(
    fc.string({ minLength: 1, maxLength: 40 }).map((k) => `Idempotency-Key: ${k.replace(/[\r\n]/g, '')}`),
    fc.constantFrom(
      'Idempotency-Key: ',
      'Idempotency-Key: caf\u00e9',
      `Idempotency-Key: ${'k'.repeat(300)}`,
      'Idempotency-Key: a b',
      'Idempotency-Key: fixed-key-1',
    ),
  );
  const contentType = fc.constantFrom(
    'Content-Type: application/json',
    'Content-Type: application/json; charset=utf-8',
    'Content-Type: application/json; charset=utf-16',
    'Content-Type: application/json; charset=latin1',
    'Content-Type: text/plain',
    'Content-Type: application/*',
    'Content-Type: ',
    'Content-Type: multipart/form-data; boundary=x',
    'Content-Type: application/problem+json',
  );
  const misc = fc.constantFrom(
    'Content-Encoding: gzip',
    'Expect: 100-continue',
    'Expect: teapot',
    'X-Forwarded-For: 1.2.3.4, 127.0.0.1',
    'X-Request-Id: \u00e9\u00e9',
    `X-Big: ${'b'.repeat(20_000)}`,
    'Upgrade: websocket',
    'Connection: Upgrade',
    'Range: bytes=0-1',
    'If-None-Match: *',
    'Accept: text/html',
    'Transfer-Encoding: identity',
  );
  return fc
    .tuple(
      fc.option(idem, { nil: undefined }),
      fc.option(contentType, { nil: undefined }),
      fc.array(misc, { maxLength: 2 }),
      conditionalHeaders(world),
    )
    .map(([i, c, m, conditional]) => [i, c, ...m, ...conditional].filter((h): h is string => h !== undefined));
}

const METHODS = [
  'GET',
  'POST',
  'HEAD',
  'PUT',
  'DELETE',
  'OPTIONS',
  'PATCH',
  'TRACE',
  'PROPFIND',
  'BREW',
  'get',
  'CONNECT',
];

/** How the body is framed: right, or broken on purpose. */
type Framing =
  | 'length'
  | 'none'
  | 'chunked'
  | 'length-short'
  | 'length-long'
  | 'length-bad'
  | 'length-twice'
  | 'length-and-chunked'
  | 'chunked-bad';

function frame(head: string[], body: Buffer, framing: Framing): Buffer {
  const lines = [...head];
  let payload = body;
  switch (framing) {
    case 'length':
      lines.push(`Content-Length: ${body.length}`);
      break;
    case 'none':
      payload = Buffer.alloc(0);
      break;
    case 'chunked':
      lines.push('Transfer-Encoding: chunked');
      payload = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
      break;
    case 'chunked-bad':
      lines.push('Transfer-Encoding: chunked');
      payload = Buffer.concat([Buffer.from('zz\r\n'), body, Buffer.from('\r\n')]);
      break;
    case 'length-short':
      lines.push(`Content-Length: ${Math.max(0, body.length - 3)}`);
      break;
    case 'length-long':
      lines.push(`Content-Length: ${body.length + 10}`);
      break;
    case 'length-bad':
      lines.push('Content-Length: -1');
      break;
    case 'length-twice':
      lines.push(`Content-Length: ${body.length}`, `Content-Length: ${body.length + 1}`);
      break;
    case 'length-and-chunked':
      lines.push(`Content-Length: ${body.length}`, 'Transfer-Encoding: chunked');
      break;
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

/** Every fuzz case: a method, path, version, host, headers and a framed body. */
export function fuzzCase(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const framing = fc.oneof(
    { weight: 8, arbitrary: fc.constant<Framing>('length') },
    fc.constantFrom<Framing>(
      'none',
      'chunked',
      'chunked-bad',
      'length-short',
      'length-long',
      'length-bad',
      'length-twice',
      'length-and-chunked',
    ),
  );
  const method = fc.oneof({ weight: 8, arbitrary: fc.constantFrom('POST', 'GET') }, fc.constantFrom(...METHODS));
  const version = fc.oneof(
    { weight: 10, arbitrary: fc.constant('HTTP/1.1') },
    fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', 'HTTP/1.1 x'),
  );
  const host = fc.oneof(
    { weight: 10, arbitrary: fc.constant(['Host: 127.0.0.1']) },
    fc.constantFrom(
      [],
      ['Host: [::1'],
      ['Host: a b'],
      [`Host: ${'h'.repeat(300)}`],
      ['Host: x', 'Host: y'],
      ['Host: evil.test:99999'],
    ),
  );
  return fc
    .record({
      method,
      path: fc.oneof(
        { weight: 3, arbitrary: fc.constant('/api/v1/runs') },
        { weight: 2, arbitrary: listingPath(world) },
        actionPath(world),
        resourcePath(world),
        pathOf(world),
      ),
      version,
      host,
      auth: authorization(world),
      other: otherHeaders(world),
      body: bodyBytes(world),
      framing,
    })
    .map((c) => {
      const head = [`${c.method} ${c.path} ${c.version}`, ...c.host, ...c.auth, ...c.other, 'Connection: close'];
      const framingUsed: Framing = c.method === 'POST' || c.framing !== 'length' ? c.framing : 'none';
      return {
        label: `${c.method} ${c.body.label} ${framingUsed}`,
        method: c.method,
        path: c.path,
        bytes: frame(head, c.body.body, framingUsed),
        incomplete: framingUsed === 'length-long',
      };
    });
}
