import { execFileSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { applyProject, deriveKeys, setSecretVariable, type Db } from '@testrun/core';
import { freePort, startService, waitReady, type ServiceProcess } from '../cli/cli-harness';
import { createTenant, testDb, testSecret } from '../support/harness';

/**
 * The secrets sweep: runs through the real API and worker processes (real Chromium) that use
 * headers, secret variables of every level and an API key, against a page that reflects request
 * headers and typed values; then every place a value could end up is searched for every value:
 * both processes' logs, every table, every Redis key and value under the run's prefix, BullMQ job
 * payloads, the API's responses, the view pages and their status.json, and the unzipped traces.
 * The figures are printed and recorded in docs/reliability/secrets.md. Over 300 lines on purpose:
 * one sweep with its reflecting page and a reader for each store it searches.
 */
jest.setTimeout(300_000);

/** Every secret the runs use, of every length (the short ones are 2 and 3 characters). */
const SECRETS = {
  authorizationHeader: 'Bearer hdr-auth-7Qm2-44e1',
  debugHeader: 'hdr-debug-Zq81-4471ab',
  // HTTP header values are bytes: a 2-character value of ASCII punctuation, no letter or digit around it to hide in.
  shortHeader: '~^',
  workspaceSecret: 'ws-pass-9Kd2-771c',
  shadowedWorkspaceSecret: 'ws-shadowed-P0z5-3a3a',
  projectSecret: 'prj-tok-Q3v8-55e0',
  requestSecret: 'req-otp-Lm4p-9921',
  shortRequestSecret: 'Ъю7',
} as const;

/** Every request header block the page got: the control that the runs did send the values. */
const received: string[] = [];

/** A page that shows every request header it got, and everything typed into its inputs. */
function reflectingPage(req: IncomingMessage, res: ServerResponse): void {
  received.push(`${req.url ?? ''} ${JSON.stringify(req.headers)}`);
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  // The run's own headers first, so that a failure text quoting the page (and cut to fit) shows them.
  const { authorization, 'x-debug-token': debug, 'x-short': short, ...rest } = req.headers;
  const headers = JSON.stringify({ 'x-debug-token': debug, 'x-short': short, authorization, ...rest });
  if (url.pathname === '/echo.json') {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(headers);
    return;
  }
  const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html>
<html><head><meta charset="utf-8"><title>Echo</title></head><body>
<h1>Echo</h1>
<pre id="headers">${escape(headers)}</pre>
<p id="query">${escape(url.search)}</p>
<input id="pw" type="password"><input id="otp"><input id="pin"><input id="tok">
<p id="typed"></p><p id="fetched"></p>
<script>
  const ids = ['pw', 'otp', 'pin', 'tok'];
  const show = () => {
    const text = ids.map((id) => id + ': ' + document.getElementById(id).value + ';').join(' ');
    document.getElementById('typed').textContent = text;
    console.log('typed ' + text);
  };
  for (const id of ids) document.getElementById(id).addEventListener('input', show);
  fetch('/echo.json').then((r) => r.text()).then((t) => { document.getElementById('fetched').textContent = t; });
</script>
</body></html>`);
}

let db: Db;
let site: Server;
let siteUrl = '';
let api: ServiceProcess;
let worker: ServiceProcess;
let apiUrl = '';
let apiKey = '';
const responses: string[] = [];

/** A call of the public API whose whole answer (status, headers, body) is kept for the search. */
async function call(
  method: string,
  p: string,
  body?: unknown,
): Promise<{ status: number; link: string; json: unknown }> {
  const res = await fetch(`${apiUrl}${p}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  responses.push(`${res.status} ${JSON.stringify([...res.headers])} ${text}`);
  return { status: res.status, link: res.headers.get('link') ?? '', json: text ? (JSON.parse(text) as unknown) : null };
}

/** A view page (no key needed), kept for the search. */
async function view(url: string): Promise<string> {
  const text = await (await fetch(url)).text();
  return text;
}

function field(value: unknown, name: string): unknown {
  if (value === null || typeof value !== 'object' || !(name in value)) throw new Error(`no ${name} in the answer`);
  return (value as Record<string, unknown>)[name];
}

function text(value: unknown, name: string): string {
  const v = field(value, name);
  if (typeof v !== 'string') throw new Error(`${name} is not a string`);
  return v;
}

async function untilTerminal(p: string): Promise<unknown> {
  for (;;) {
    const { json } = await call('GET', p);
    const status = text(json, 'status');
    if (status !== 'queued' && status !== 'running') return json;
    await new Promise((r) => setTimeout(r, 300));
  }
}

beforeAll(async () => {
  db = testDb();
  site = createServer(reflectingPage);
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const tenant = await createTenant(db);
  apiKey = tenant.key;
  const ws = tenant.workspace.id;
  const reflect = [
    { action: 'goto', url: '/echo' },
    { action: 'fill', selector: '#pw', value: '{{secrets.PASSWORD}}' },
    { action: 'fill', selector: '#otp', value: '{{secrets.OTP}}' },
    { action: 'fill', selector: '#pin', value: '{{secrets.PIN}}' },
    { action: 'fill', selector: '#tok', value: '{{ secrets.PROJECT_TOKEN }}' },
  ];
  await applyProject(db, ws, {
    slug: 'sweep',
    name: 'Sweep',
    baseUrl: siteUrl,
    suites: [
      {
        slug: 'reflect',
        name: 'Reflect',
        tests: [
          {
            key: 'typed-echo',
            name: 'Typed values echoed, then a failing expectation quotes them',
            steps: [...reflect, { action: 'expectText', selector: '#typed', text: 'never shown', timeoutMs: 1_000 }],
          },
          {
            key: 'header-echo',
            name: 'Headers echoed, then a failing expectation quotes them',
            steps: [
              { action: 'goto', url: '/echo' },
              { action: 'expectText', selector: '#fetched', text: 'x-short', timeoutMs: 5_000 },
              { action: 'expectText', selector: '#headers', text: 'never shown', timeoutMs: 1_000 },
            ],
          },
          {
            key: 'secret-in-url',
            name: 'A secret in the URL and every value typed; passes',
            steps: [
              { action: 'goto', url: '/echo?otp={{secrets.OTP}}&user={{vars.USER}}' },
              ...reflect.slice(1),
              { action: 'expectText', selector: '#typed', text: 'tok: {{secrets.PROJECT_TOKEN}};' },
            ],
          },
          {
            key: 'unknown',
            name: 'An unknown secret',
            steps: [{ action: 'fill', selector: '#pw', value: '{{secrets.NOT_DEFINED}}' }],
          },
        ],
      },
    ],
  });
  const key = deriveKeys(testSecret()).headers;
  await setSecretVariable(db, key, { workspaceId: ws }, 'PASSWORD', SECRETS.workspaceSecret);
  await setSecretVariable(db, key, { workspaceId: ws }, 'PROJECT_TOKEN', SECRETS.shadowedWorkspaceSecret);
  await setSecretVariable(db, key, { workspaceId: ws, projectSlug: 'sweep' }, 'PROJECT_TOKEN', SECRETS.projectSecret);

  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  // Debug logs: the most a process ever writes.
  api = startService('api', { PORT: String(port), PUBLIC_BASE_URL: apiUrl, LOG_LEVEL: 'debug' });
  worker = startService('worker', { WORKER_CONCURRENCY: '2', WORKER_VIDEO: 'off', LOG_LEVEL: 'debug' });
  await waitReady(`${apiUrl}/readyz`, api);
});

afterAll(async () => {
  await Promise.all([api.stop(), worker.stop()]);
  await new Promise<void>((resolve) => site.close(() => resolve()));
  await db.$disconnect();
});

/** Every row of every table, as text. */
async function dumpTables(): Promise<string> {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    const parts: string[] = [];
    for (const { table_name: table } of rows) {
      const dump = await client.query<{ row: string }>(`SELECT t::text AS row FROM "${table}" t`);
      parts.push(`${table}\n${dump.rows.map((r) => r.row).join('\n')}`);
    }
    return parts.join('\n');
  } finally {
    await client.end();
  }
}

/** Every key and value under this test file's Redis prefix, and the BullMQ job payloads among them. */
async function dumpRedis(): Promise<{ all: string; jobs: string; keys: number }> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true });
  await redis.connect();
  try {
    const prefix = process.env.REDIS_PREFIX ?? '';
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    const all: string[] = [];
    const jobs: string[] = [];
    for (const k of keys) {
      const type = await redis.type(k);
      let value: unknown;
      if (type === 'string') value = await redis.get(k);
      else if (type === 'hash') value = await redis.hgetall(k);
      else if (type === 'list') value = await redis.lrange(k, 0, -1);
      else if (type === 'set') value = await redis.smembers(k);
      else if (type === 'zset') value = await redis.zrange(k, '0', '-1');
      else if (type === 'stream') value = await redis.xrange(k, '-', '+');
      const line = `${k} ${JSON.stringify(value)}`;
      all.push(line);
      if (type === 'hash' && value !== null && typeof value === 'object' && 'data' in value) jobs.push(line);
    }
    return { all: all.join('\n'), jobs: jobs.join('\n'), keys: keys.length };
  } finally {
    redis.disconnect();
  }
}

/** Every entry of every stored trace, unzipped, and every other stored artifact file, as bytes. */
function storedArtifacts(): { traces: Buffer[]; files: Buffer[] } {
  const root = process.env.ARTIFACTS_DIR ?? '';
  const traces: Buffer[] = [];
  const files: Buffer[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else if (name.endsWith('.zip')) {
        const entries = execFileSync('unzip', ['-Z1', file]).toString('utf8').split('\n').filter(Boolean);
        for (const entry of entries)
          traces.push(execFileSync('unzip', ['-p', file, entry], { maxBuffer: 256 * 1024 * 1024 }));
      } else files.push(readFileSync(file));
    }
  };
  walk(root);
  return { traces, files };
}

/** Bytes of images and other binary entries: searched only for values long enough not to occur by chance. */
const BINARY_SEARCH_MIN_BYTES = 6;

function isText(buffer: Buffer): boolean {
  if (buffer.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(buffer);
    return true;
  } catch {
    return false;
  }
}

/**
 * Every text is searched for every value. A 2-byte value occurs by chance about every 64 KiB of
 * compressed image data, and a page that paints a secret shows it in its pixels, not its bytes: a
 * binary file is searched for the values of 6 bytes or more only.
 */
function searchable(buffer: Buffer, value: string): boolean {
  return Buffer.byteLength(value) >= BINARY_SEARCH_MIN_BYTES || isText(buffer);
}

test('no secret value is found anywhere after runs that used them all', async () => {
  const created = await call('POST', '/api/v1/runs', {
    projectSlug: 'sweep',
    suiteSlug: 'reflect',
    headers: {
      Authorization: SECRETS.authorizationHeader,
      'X-Debug-Token': SECRETS.debugHeader,
      'X-Short': SECRETS.shortHeader,
    },
    variables: { USER: 'ada' },
    secretVariables: { OTP: SECRETS.requestSecret, PIN: SECRETS.shortRequestSecret },
    // Everything a run can keep is kept, passing runs included, so that all of it is searched.
    evidence: { trace: 'on', video: 'on', screenshots: 'on' },
  });
  expect(created.status).toBe(201);
  const suiteRunId = text(created.json, 'suiteRunId');
  const suiteRun = await untilTerminal(`/api/v1/suite-runs/${suiteRunId}`);
  const tests = field(suiteRun, 'tests');
  if (!Array.isArray(tests)) throw new Error('the suite run has no tests');
  const runs = new Map<string, unknown>();
  for (const t of tests) runs.set(text(t, 'name'), (await call('GET', `/api/v1/runs/${text(t, 'runId')}`)).json);
  const runOf = (name: string) => runs.get(name);

  // The runs did what the secrets were for, and said so without a value.
  expect(runOf('A secret in the URL and every value typed; passes')).toMatchObject({ status: 'passed' });
  expect(text(runOf('Typed values echoed, then a failing expectation quotes them'), 'result_summary')).toMatch(
    /^Failed at step 6 \(expectText "#typed"\): expected text of "#typed" to contain "never shown" but it was "pw: \*\*\*\*; otp: \*\*\*\*; pin: \*\*\*\*; tok: \*\*\*\*;"/,
  );
  const headerRun = text(runOf('Headers echoed, then a failing expectation quotes them'), 'result_summary');
  expect(headerRun).toContain('"x-debug-token":"****"');
  expect(headerRun).toContain('"x-short":"****"');
  expect(headerRun).toContain('"authorization":"****"');
  const unknown = runOf('An unknown secret');
  expect(text(unknown, 'status')).toBe('error');
  expect(field(unknown, 'error')).toMatchObject({ code: 'invalid_definition' });
  expect(text(unknown, 'result_summary')).toContain('{{secrets.NOT_DEFINED}}');
  // The control: the values did reach the target, so a search that finds none means something.
  const sent = received.join('\n');
  for (const value of [SECRETS.authorizationHeader, SECRETS.debugHeader, SECRETS.shortHeader, SECRETS.requestSecret])
    expect(sent).toContain(value);
  // Sealed values are erased when the runs end.
  expect(
    await db.run.count({
      where: { suiteRunId, OR: [{ headersSealed: { not: null } }, { variablesSealed: { not: null } }] },
    }),
  ).toBe(0);

  // The view pages of the suite run and of every run, with their status.json.
  const views: string[] = [];
  const linkOf = (link: string) => /<([^>]+)>/.exec(link)?.[1];
  const suiteLink = linkOf((await call('GET', `/api/v1/suite-runs/${suiteRunId}`)).link);
  const links = [suiteLink];
  for (const t of tests) links.push(linkOf((await call('GET', `/api/v1/runs/${text(t, 'runId')}`)).link));
  for (const link of links) {
    if (!link) continue;
    views.push(await view(link), await view(`${link}/status.json`));
  }
  expect(views.length).toBeGreaterThan(0);

  await Promise.all([api.stop(), worker.stop()]);
  const redis = await dumpRedis();
  const artifacts = storedArtifacts();
  expect(artifacts.traces.length).toBeGreaterThan(0);

  const places: Record<string, Buffer[]> = {
    'API log': [Buffer.from(api.output())],
    'worker log': [Buffer.from(worker.output())],
    'every table (SELECT t::text)': [Buffer.from(await dumpTables())],
    'Redis keys and values': [Buffer.from(redis.all)],
    'BullMQ job payloads': [Buffer.from(redis.jobs)],
    'API responses': responses.map((r) => Buffer.from(r)),
    'view pages and status.json': views.map((v) => Buffer.from(v)),
    'unzipped trace entries': artifacts.traces,
    'other stored artifacts (screenshots)': artifacts.files,
  };
  const values = { ...SECRETS, apiKey };
  const hits: string[] = [];
  for (const [place, buffers] of Object.entries(places))
    for (const [name, value] of Object.entries(values))
      for (const buffer of buffers)
        if (searchable(buffer, value) && buffer.includes(Buffer.from(value))) hits.push(`${name} in ${place}`);
  const figures = {
    values: Object.keys(values).length,
    places: Object.keys(places).length,
    searches: Object.keys(values).length * Object.keys(places).length,
    redisKeys: redis.keys,
    traceEntries: artifacts.traces.length,
    bytesSearched: Object.values(places)
      .flat()
      .reduce((n, b) => n + b.length, 0),
    hits: hits.length,
  };
  const report = path.join(mkdtempSync(path.join(tmpdir(), 'secrets-sweep-')), 'figures.json');
  writeFileSync(report, JSON.stringify(figures, null, 2));
  process.stdout.write(`secrets sweep: ${JSON.stringify(figures)} (${report})\n`);
  expect(hits).toEqual([]);
});
