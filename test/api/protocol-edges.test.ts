// Input hardening: text Postgres cannot store, malformed URLs, methods, the HTTP parser's own
// refusals and the request limits all answer 4xx problem documents, and none of them creates a run.
import { connect } from 'node:net';
import type { Server } from 'node:http';
import request from 'supertest';
import { REQUEST_LIMITS, STEP_LIMITS } from '@testrun/contracts';
import { applySampleProject, createTenant, sampleProject } from '../support/harness';
import { bearer, jobIdsIn, serveTestApi, type TestApi } from './api-harness';
import { expectProblem, expectRawProblem, type RawAnswer } from '../support/problems';
import { problemOf } from './typed';

let api: TestApi;
let server: Server;
let port: number;
let closeServed: () => Promise<void>;
beforeAll(async () => {
  ({ api, server, port, close: closeServed } = await serveTestApi());
});
afterAll(() => closeServed());

/** Sends raw bytes and returns the whole answer the server writes before closing. */
async function raw(bytes: string | Buffer): Promise<RawAnswer> {
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    socket.on('data', (c: Buffer) => (out += c.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(out));
    socket.write(bytes);
    socket.setTimeout(10_000, () => socket.destroy());
  });
  const [head = '', body = ''] = text.split('\r\n\r\n', 2);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  return { status, headers: head, body };
}

/** The server's open connections (idle keep-alive ones closed first), once none are left or after a generous wait. */
async function openConnections(): Promise<number> {
  const count = () => new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)));
  for (let tries = 0; tries < 300; tries++) {
    server.closeIdleConnections();
    const open = await count();
    if (open === 0) return 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return count();
}

describe('text Postgres cannot store', () => {
  it.each([
    ['NUL in baseUrl', { testId: 'tst_x', baseUrl: 'http://a.test/\u0000' }],
    ['NUL in testId', { testId: 'tst_\u0000' }],
    ['NUL in projectSlug', { projectSlug: 'p\u0000' }],
    ['NUL in a header value', { testId: 'tst_x', headers: { 'X-A': 'a\u0000' } }],
    ['an unpaired surrogate in suiteSlug', { projectSlug: 'p', suiteSlug: 'a\ud800' }],
  ])('%s in the body is 400 invalid_body and creates nothing', async (_what, body) => {
    const t = await createTenant(api.db);
    const res = await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send(body);
    expectProblem(res, 'invalid_body');
    expect(await api.db.run.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
  });

  it('a lone surrogate escaped in raw JSON is refused too', async () => {
    const t = await createTenant(api.db);
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .set('Content-Type', 'application/json')
      .send('{"projectSlug":"\\udc00x"}');
    expectProblem(res, 'invalid_body');
    expect(problemOf(res).errors).toEqual([
      { path: '/projectSlug', message: expect.stringMatching(/surrogate/) as string },
    ]);
  });

  it.each(['/api/v1/runs/run_%00', '/api/v1/suite-runs/a%00b', '/api/v1/runs/%ED%A0%80'])(
    'GET %s is 400 bad_request',
    async (path) => {
      const t = await createTenant(api.db);
      expectProblem(await request(api.app).get(path).set(bearer(t.key)), 'bad_request');
    },
  );

  it('a refused name is echoed with U+FFFD, never as the text refused', async () => {
    const t = await createTenant(api.db);
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ testId: 'tst_x', headers: { 'X-\udc00': 'v' } });
    expectProblem(res, 'invalid_body');
    expect(res.text).not.toMatch(/\\udc00|\\u0000/i);
    expect(problemOf(res).detail).toContain('X-\ufffd');
  });

  it('a compressed body is 415, never inflated', async () => {
    const t = await createTenant(api.db);
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send('');
    expectProblem(res, 'unsupported_media_type');
  });

  it('a NUL in a query value is 400', async () => {
    expectProblem(await request(api.app).get('/healthz?x=%00'), 'bad_request');
  });
});

describe('malformed URLs and methods', () => {
  it.each(['/api/v1/runs/%ZZ', '/api/v1/suite-runs/%E0%A4%A', '/view/%ZZ', '/view/runs/run_x/%ZZ'])(
    '%s is 400 bad_request, a problem document',
    async (path) => {
      const t = await createTenant(api.db);
      expectProblem(await request(api.app).get(path).set(bearer(t.key)), 'bad_request');
    },
  );

  it('OPTIONS and other methods are 405 with Allow', async () => {
    const options = await request(api.app).options('/api/v1/runs');
    expectProblem(options, 'method_not_allowed');
    expect(options.headers.allow).toBe('GET, HEAD, POST');
    const del = await request(api.app).delete('/api/v1/runs/run_x');
    expectProblem(del, 'method_not_allowed');
    expect(del.headers.allow).toBe('GET, HEAD');
    expectProblem(await request(api.app).put('/view/x'), 'method_not_allowed');
    // The Allow header comes from the declared routes: an action URL takes POST alone, a secret's URL
    // PUT and DELETE (no GET), a project's secrets GET alone.
    expect((await request(api.app).options('/api/v1/runs/run_x/cancel')).headers.allow).toBe('POST');
    expect((await request(api.app).options('/api/v1/projects/p/secrets/TOKEN')).headers.allow).toBe('PUT, DELETE');
    expect((await request(api.app).patch('/api/v1/secrets/TOKEN')).headers.allow).toBe('PUT, DELETE');
    expect((await request(api.app).options('/api/v1/projects/p/secrets')).headers.allow).toBe('GET, HEAD');
  });
});

describe("the HTTP server's own refusals", () => {
  it('malformed framing is a 400 problem', async () => {
    expectRawProblem(await raw('GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n'), 'bad_request');
    expectRawProblem(await raw('GET /healthz HTTP/1.1\r\nHost: a\r\nX-A: a\u0000b\r\n\r\n'), 'bad_request');
    expectRawProblem(await raw('BREW /healthz HTTP/1.1\r\nHost: a\r\n\r\n'), 'bad_request');
  });

  it('an oversized header block is a 431 problem', async () => {
    const big = 'a'.repeat(REQUEST_LIMITS.maxHeaderBytes + 10);
    expectRawProblem(
      await raw(`GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: ${big}\r\n\r\n`),
      'request_header_fields_too_large',
    );
  });

  it('too many header fields is a 431 problem naming the limit', async () => {
    const fields = Array.from({ length: REQUEST_LIMITS.maxHeaderCount + 1 }, (_, i) => `X-H${i}: v\r\n`).join('');
    const answer = await raw(`GET /healthz HTTP/1.1\r\nHost: a\r\n${fields}Connection: close\r\n\r\n`);
    expectRawProblem(answer, 'request_header_fields_too_large');
    expect(answer.body).toContain(String(REQUEST_LIMITS.maxHeaderCount));
  });

  it('a CONNECT with a body the API never reads is answered, and the server closes its connection', async () => {
    // Node hands a CONNECT's socket over without reading it: left unread, the body filled its
    // receive buffer, the client's close never arrived behind it, and the connection stayed open.
    const body = Buffer.alloc(300_000, 'a');
    const answer = await raw(
      Buffer.concat([
        Buffer.from(`CONNECT /api/v1/runs HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n`),
        body,
      ]),
    );
    expectRawProblem(answer, 'method_not_allowed');
    await expect(openConnections()).resolves.toBe(0);
  });

  it('CONNECT is a 405 problem and a request without Host a 400 problem', async () => {
    expectRawProblem(await raw('CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: a\r\n\r\n'), 'method_not_allowed');
    expectRawProblem(await raw('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n'), 'bad_request');
  });

  it('an Expect other than 100-continue is a 417 problem', async () => {
    expectRawProblem(await raw('GET /healthz HTTP/1.1\r\nHost: a\r\nExpect: teapot\r\n\r\n'), 'expectation_failed');
  });
});

describe('header values a browser cannot send', () => {
  it.each([
    ['a character beyond Latin-1', 's3cret\u2603'],
    ['an emoji', 's3cret\u{1f4a5}'],
    ['CJK text', 's3cret\u65e5\u672c'],
  ])('%s in a run header is 400 invalid_body naming the header, and creates nothing', async (_what, value) => {
    const t = await createTenant(api.db);
    await applySampleProject(api.db, t.workspace.id, sampleProject('shop'));
    const jobsBefore = await jobIdsIn(api.queue);
    const res = await request(server)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', headers: { 'X-Latin': 'caf\u00e9', 'X-Bypass-Token': value } });
    const problem = expectProblem(res, 'invalid_body');
    expect(problem.errors).toEqual([
      { path: '/headers/X-Bypass-Token', message: expect.stringMatching(/Latin-1/) as string },
    ]);
    expect(problem.detail).toContain('X-Bypass-Token');
    expect(res.text).not.toContain('s3cret');
    expect(await api.db.run.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
    expect(await jobIdsIn(api.queue)).toEqual(jobsBefore);
  });

  it('a Latin-1 value is sent as it is: the run is created', async () => {
    const t = await createTenant(api.db);
    await applySampleProject(api.db, t.workspace.id, sampleProject('shop'));
    const res = await request(server)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', suiteSlug: 'smoke', headers: { 'X-Latin': 'caf\u00e9 \u00ff' } });
    expect(res.status).toBe(201);
  });

  it('the UTF-8 bytes of such a value in the Idempotency-Key header are a 400 naming it, and create nothing', async () => {
    const t = await createTenant(api.db);
    await applySampleProject(api.db, t.workspace.id, sampleProject('shop'));
    const body = JSON.stringify({ projectSlug: 'shop' });
    const head = `POST /api/v1/runs HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\nIdempotency-Key: `;
    const answer = await raw(
      Buffer.concat([Buffer.from(head), Buffer.from('\u65e5\u672c-1', 'utf8'), Buffer.from(`\r\n\r\n${body}`)]),
    );
    const problem = expectRawProblem(answer, 'invalid_body');
    expect(problem.errors).toEqual([{ path: 'header:Idempotency-Key', message: expect.any(String) as string }]);
    expect(problem.detail).toContain('Idempotency-Key');
    expect(await api.db.run.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
  });
});

describe('runs per request', () => {
  it('a request over the cap is 422 too_many_runs naming the cap, and creates nothing', async () => {
    const t = await createTenant(api.db, { maxActiveRuns: 100_000, monthlyRuns: 100_000 });
    // One test over the cap, in as few suites as a suite's own cap allows.
    const suites = Math.ceil((REQUEST_LIMITS.maxRunsPerRequest + 1) / STEP_LIMITS.maxTestsPerSuite) + 1;
    const perSuite = Math.ceil((REQUEST_LIMITS.maxRunsPerRequest + 1) / suites);
    const slugs = Array.from({ length: suites }, (_, i) => `s${i}`);
    await applySampleProject(api.db, t.workspace.id, sampleProject('big', { count: perSuite, suites: slugs }));
    const jobsBefore = await jobIdsIn(api.queue);
    const res = await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'big' });
    expectProblem(res, 'too_many_runs');
    expect(problemOf(res).detail).toContain(String(REQUEST_LIMITS.maxRunsPerRequest));
    expect(await api.db.run.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
    expect(await jobIdsIn(api.queue)).toEqual(jobsBefore);
  });
});
