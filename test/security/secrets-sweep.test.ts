import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { applyProject, setSecretVariable } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { deriveKeys } from '@testrun/core/secrets';
import { freePort, startService, waitReady, type ServiceProcess } from '../cli/cli-harness';
import { createTenant, testDb, testSecret } from '../support/harness';
import { received, sweepSite } from './secrets-sweep-site';
import { dumpRedis, dumpTables, searchable, spellings, storedArtifacts } from './secrets-sweep-stores';

/**
 * The secrets sweep: runs through the real API and worker processes (real Chromium) that use
 * headers (a Bearer and a Basic `Authorization` among them), secret variables of every level and
 * an API key, against a site that reflects request headers, typed values, a GET form's submission,
 * the URL it was asked for and a refused credential, each in the spelling it arrived in; then every
 * place a value could end up is searched for every spelling of every value (as it is, JSON, HTML,
 * percent-, form- and URL-encoded, base64): both processes' logs, every table, every Redis key and
 * value under the run's prefix, BullMQ job payloads, the API's responses, the view pages and their
 * status.json, and the unzipped traces. The figures are printed and recorded in
 * docs/reliability/secrets.md.
 */
jest.setTimeout(300_000);

const BASIC_USER_PASSWORD = 'sweep-user:b4sic-Pw-81x!';
const BASIC_CREDENTIAL = Buffer.from(BASIC_USER_PASSWORD).toString('base64');

/** Every secret the runs use, of every length (the short ones are 2 and 3 characters), and the parts of the credentials. */
const SECRETS = {
  authorizationHeader: 'Bearer hdr-auth-7Qm2-44e1',
  bearerToken: 'hdr-auth-7Qm2-44e1',
  basicHeader: `Basic ${BASIC_CREDENTIAL}`,
  basicCredential: BASIC_CREDENTIAL,
  basicUserPassword: BASIC_USER_PASSWORD,
  basicPassword: 'b4sic-Pw-81x!',
  debugHeader: 'hdr-debug-Zq81-4471ab',
  // HTTP header values are bytes: a 2-character value of ASCII punctuation, no letter or digit around it to hide in.
  shortHeader: '~^',
  workspaceSecret: 'ws-pass-9Kd2-771c',
  shadowedWorkspaceSecret: 'ws-shadowed-P0z5-3a3a',
  projectSecret: 'prj-tok-Q3v8-55e0',
  requestSecret: 'req-otp-Lm4p-9921',
  shortRequestSecret: 'Ъю7',
  // Spelled differently by a form (`p%40ss+w0rd%21x%7E%287%29`) and by the URL parser (`p@ss%20w0rd!x~(7)`).
  formSecret: 'p@ss w0rd!x~(7)',
} as const;

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
  if (typeof v !== 'string') throw new Error(`${name} is not a string: ${JSON.stringify(value)}`);
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

/** Posts a suite run, waits for it to end, and reads it: every run by its test's name, every view link. */
async function runSuite(body: Record<string, unknown>): Promise<{ runs: Map<string, unknown>; links: string[] }> {
  const created = await call('POST', '/api/v1/runs', {
    projectSlug: 'sweep',
    ...body,
    // Everything a run can keep is kept, passing runs included, so that all of it is searched.
    evidence: { trace: 'on', video: 'on', screenshots: 'on' },
  });
  expect(created.status).toBe(201);
  const suiteRunId = text(created.json, 'suiteRunId');
  const suiteRun = await untilTerminal(`/api/v1/suite-runs/${suiteRunId}`);
  const tests = field(suiteRun, 'tests');
  if (!Array.isArray(tests)) throw new Error('the suite run has no tests');
  const linkOf = (link: string) => /<([^>]+)>/.exec(link)?.[1] ?? '';
  const links = [linkOf((await call('GET', `/api/v1/suite-runs/${suiteRunId}`)).link)];
  const runs = new Map<string, unknown>();
  for (const t of tests) {
    const run = await call('GET', `/api/v1/runs/${text(t, 'runId')}`);
    runs.set(text(t, 'name'), run.json);
    links.push(linkOf(run.link));
  }
  // Sealed values are erased when the runs end.
  expect(
    await db.run.count({
      where: { suiteRunId, OR: [{ headersSealed: { not: null } }, { variablesSealed: { not: null } }] },
    }),
  ).toBe(0);
  return { runs, links: links.filter(Boolean) };
}

/** The tests of the `reflect` suite: every secret typed, echoed, put in a URL or refused, and quoted. */
function reflectTests(): unknown[] {
  const reflect = [
    { action: 'goto', url: '/echo' },
    { action: 'fill', selector: '#pw', value: '{{secrets.PASSWORD}}' },
    { action: 'fill', selector: '#otp', value: '{{secrets.OTP}}' },
    { action: 'fill', selector: '#pin', value: '{{secrets.PIN}}' },
    { action: 'fill', selector: '#tok', value: '{{ secrets.PROJECT_TOKEN }}' },
  ];
  const neverShown = (selector: string) => ({ action: 'expectText', selector, text: 'never shown', timeoutMs: 1_000 });
  return [
    {
      key: 'typed-echo',
      name: 'Typed values echoed, then a failing expectation quotes them',
      steps: [...reflect, neverShown('#typed')],
    },
    {
      key: 'header-echo',
      name: 'Headers echoed, then a failing expectation quotes them',
      steps: [
        { action: 'goto', url: '/echo' },
        { action: 'expectText', selector: '#fetched', text: 'x-short', timeoutMs: 5_000 },
        neverShown('#headers'),
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
      key: 'form-echo',
      name: 'A secret sent by a GET form, its form-encoded query quoted',
      steps: [
        { action: 'goto', url: '/form' },
        { action: 'fill', selector: '#fpw', value: '{{secrets.FORM}}' },
        { action: 'click', selector: '#send' },
        { action: 'expectText', selector: '#query', text: 'pw=', timeoutMs: 5_000 },
        neverShown('#query'),
      ],
    },
    {
      key: 'path-echo',
      name: 'A secret in the path and query of a goto URL, quoted as the browser encoded it',
      steps: [{ action: 'goto', url: '/echo/{{secrets.FORM}}?q={{secrets.FORM}}' }, neverShown('#path')],
    },
    {
      key: 'bearer-refused',
      name: 'A 401 quoting the Bearer token it refused',
      steps: [
        { action: 'goto', url: '/login' },
        { action: 'expectText', selector: '#denied', text: 'welcome', timeoutMs: 2_000 },
      ],
    },
    { key: 'page-401', name: 'A 401 page opened', steps: [{ action: 'goto', url: '/protected' }] },
    {
      key: 'unknown',
      name: 'An unknown secret',
      steps: [{ action: 'fill', selector: '#pw', value: '{{secrets.NOT_DEFINED}}' }],
    },
  ];
}

beforeAll(async () => {
  db = testDb();
  site = createServer(sweepSite);
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const tenant = await createTenant(db);
  apiKey = tenant.key;
  const ws = tenant.workspace.id;
  const refused = {
    key: 'basic-refused',
    name: 'A 401 quoting the Basic credential it refused, decoded',
    steps: [
      { action: 'goto', url: '/login' },
      { action: 'expectText', selector: '#denied', text: 'welcome', timeoutMs: 2_000 },
    ],
  };
  await applyProject(db, ws, {
    slug: 'sweep',
    name: 'Sweep',
    baseUrl: siteUrl,
    suites: [
      { slug: 'reflect', name: 'Reflect', tests: reflectTests() },
      { slug: 'basic', name: 'Basic', tests: [refused, { ...refused, key: 'page-401', name: 'A 401 page opened' }] },
    ],
  });
  const key = deriveKeys(testSecret()).headers;
  await setSecretVariable(db, key, { workspaceId: ws }, 'PASSWORD', SECRETS.workspaceSecret);
  await setSecretVariable(db, key, { workspaceId: ws }, 'PROJECT_TOKEN', SECRETS.shadowedWorkspaceSecret);
  await setSecretVariable(db, key, { workspaceId: ws, projectSlug: 'sweep' }, 'PROJECT_TOKEN', SECRETS.projectSecret);

  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  // Debug logs: the most a process ever writes.
  // Two suite runs polled until they end: more calls than the default 60 a minute.
  api = startService('api', {
    PORT: String(port),
    PUBLIC_BASE_URL: apiUrl,
    LOG_LEVEL: 'debug',
    RATE_LIMIT_PER_MINUTE: '1000',
  });
  worker = startService('worker', { WORKER_CONCURRENCY: '2', WORKER_VIDEO: 'off', LOG_LEVEL: 'debug' });
  await waitReady(`${apiUrl}/readyz`, api);
});

afterAll(async () => {
  await Promise.all([api.stop(), worker.stop()]);
  await new Promise<void>((resolve) => site.close(() => resolve()));
  await db.$disconnect();
});

test('no spelling of any secret value is found anywhere after runs that used them all', async () => {
  const reflect = await runSuite({
    suiteSlug: 'reflect',
    headers: {
      Authorization: SECRETS.authorizationHeader,
      'X-Debug-Token': SECRETS.debugHeader,
      'X-Short': SECRETS.shortHeader,
    },
    variables: { USER: 'ada' },
    secretVariables: { OTP: SECRETS.requestSecret, PIN: SECRETS.shortRequestSecret, FORM: SECRETS.formSecret },
  });
  const basic = await runSuite({ suiteSlug: 'basic', headers: { Authorization: SECRETS.basicHeader } });
  const summaryOf = (name: string) => text(reflect.runs.get(name) ?? basic.runs.get(name), 'result_summary');

  // The runs did what the secrets were for, and said so without a value.
  expect(reflect.runs.get('A secret in the URL and every value typed; passes')).toMatchObject({ status: 'passed' });
  expect(summaryOf('Typed values echoed, then a failing expectation quotes them')).toMatch(
    /^Failed at step 6 \(expectText "#typed"\): expected text of "#typed" to contain "never shown" but it was "pw: \*\*\*\*; otp: \*\*\*\*; pin: \*\*\*\*; tok: \*\*\*\*;"/,
  );
  const headerRun = summaryOf('Headers echoed, then a failing expectation quotes them');
  expect(headerRun).toContain('"x-debug-token":"****"');
  expect(headerRun).toContain('"x-short":"****"');
  expect(headerRun).toContain('"authorization":"****"');
  expect(summaryOf('A secret sent by a GET form, its form-encoded query quoted')).toContain('but it was "pw=****"');
  expect(summaryOf('A secret in the path and query of a goto URL, quoted as the browser encoded it')).toContain(
    'but it was "/echo/****"',
  );
  expect(summaryOf('A 401 quoting the Bearer token it refused')).toContain('"invalid token ****"');
  expect(summaryOf('A 401 quoting the Basic credential it refused, decoded')).toContain(
    '"invalid credentials **** (****): wrong password ****"',
  );
  const unknown = reflect.runs.get('An unknown secret');
  expect(text(unknown, 'status')).toBe('error');
  expect(field(unknown, 'error')).toMatchObject({ code: 'invalid_definition' });
  expect(text(unknown, 'result_summary')).toContain('{{secrets.NOT_DEFINED}}');
  // The control: the values did reach the target, in the spellings searched for, so a search that finds none means something.
  const sent = received.join('\n');
  for (const value of [
    SECRETS.authorizationHeader,
    SECRETS.basicHeader,
    SECRETS.debugHeader,
    SECRETS.shortHeader,
    SECRETS.requestSecret,
    'pw=p%40ss+w0rd%21x%7E%287%29',
    '/echo/p@ss%20w0rd!x~(7)?q=p@ss%20w0rd!x~(7)',
  ])
    expect(sent).toContain(value);

  // The view pages of the suite runs and of every run, with their status.json.
  const views: string[] = [];
  for (const link of [...reflect.links, ...basic.links])
    views.push(await view(link), await view(`${link}/status.json`));
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
  const searched = Object.entries(values).flatMap(([name, value]) =>
    spellings(value).map((spelling) => ({ name, spelling, bytes: Buffer.from(spelling) })),
  );
  const hits: string[] = [];
  for (const [place, buffers] of Object.entries(places))
    for (const { name, spelling, bytes } of searched)
      for (const buffer of buffers)
        if (searchable(buffer, spelling) && buffer.includes(bytes)) hits.push(`${name} as ${spelling} in ${place}`);
  const figures = {
    values: Object.keys(values).length,
    spellings: searched.length,
    places: Object.keys(places).length,
    searches: searched.length * Object.keys(places).length,
    redisKeys: redis.keys,
    traceEntries: artifacts.traces.length,
    bytesSearched: Object.values(places)
      .flat()
      .reduce((n, b) => n + b.length, 0),
    hits: hits.length,
  };
  process.stdout.write(`secrets sweep: ${JSON.stringify(figures)}\n`);
  expect(hits).toEqual([]);
});
