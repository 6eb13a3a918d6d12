import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileValidator, Problem, type Run } from '@testrun/contracts';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import type { LookupAll, ResolvedAddress } from '@testrun/core/target-policy';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { apiClient, memoryLogger, startApi } from '../e2e/support';
import { createTenant, testDb } from '../support/harness';
import { testTargetAllow } from '../support/processes';

/*
 * The SSRF suite (docs/reliability/ssrf.md). Only loopback is ever dialled: the non-loopback forms
 * (metadata, private ranges) are proven refused at enqueue, before any run exists; end to end, every
 * blocked target is a loopback listener this file owns (it counts connections), the deployment's
 * own Postgres, Redis and API ports, or a name that a resolver table maps to a denied loopback address.
 */

/** A listener that counts every TCP connection it accepts. */
interface Listener {
  server: Server;
  port: number;
  connections: number;
}

async function listen(host: string, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listener> {
  const server = createServer(handler);
  const listener: Listener = { server, port: 0, connections: 0 };
  server.on('connection', () => (listener.connections += 1));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  listener.port = (server.address() as AddressInfo).port;
  return listener;
}

const SECRET = 'SECRET-INTERNAL-ANSWER';
const html = (body: string, head = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>page</title>${head}</head><body>${body}</body></html>`;

/** The allowed fixture: pages that send the browser to `to` in every way a page can. */
function fixturePage(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://fixture');
  const to = url.searchParams.get('to') ?? '/';
  switch (url.pathname) {
    case '/r302':
      res.writeHead(302, { location: to }).end();
      return;
    case '/r307':
      res.writeHead(307, { location: to }).end();
      return;
    case '/meta':
      res.end(html('meta', `<meta http-equiv="refresh" content="0;url=${to}">`));
      return;
    case '/js':
      res.end(html(`<script>setTimeout(() => { location = ${JSON.stringify(to)}; }, 10);</script>`));
      return;
    case '/fetch':
      res.end(
        html(
          `<script>fetch(${JSON.stringify(to)}).then((r) => r.text()).catch(() => '').then((t) => { document.body.textContent = t; document.title = 'fetched'; });</script>`,
        ),
      );
      return;
    default:
      res.end(html('<h1>fixture</h1>'));
  }
}

const checkProblem = compileValidator(Problem);

/** A reply's body as the contract's problem document; anything else fails the test here. */
async function problemOf(res: Response): Promise<Problem> {
  const checked = checkProblem(await res.json());
  if (!checked.ok) throw new Error(`HTTP ${res.status} did not answer a problem document`);
  return checked.value;
}

type Way = 'r302' | 'r307' | 'meta' | 'js' | 'fetch';
const EVERY_WAY: readonly Way[] = ['r302', 'r307', 'meta', 'js', 'fetch'];

/** The steps of a test that sends the browser to `to` one way; the second step waits until it has tried. */
function stepsFor(way: Way, to: string) {
  const goto = { action: 'goto' as const, url: `/${way}?to=${encodeURIComponent(to)}` };
  switch (way) {
    case 'r302':
    case 'r307':
      return [goto];
    case 'meta':
    case 'js':
      return [goto, { action: 'expectUrl' as const, url: to }];
    case 'fetch':
      return [goto, { action: 'expectTitle' as const, title: 'fetched' }];
  }
}

let db: Db;
let fixture: Listener;
/** On 127.0.0.2: loopback beyond the allowed ports of 127.0.0.1. */
let otherLoopback: Listener;
/** On 127.0.0.1, allowed by the port range of the test set-up but denied by TARGET_DENY with its port. */
let deniedPort: Listener;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: WorkerService;
let client: ReturnType<typeof apiClient>;
let workspaceId: string;
let key: string;
const askedNames: string[] = [];

/** The only resolver the worker gets: a table. Nothing is ever asked of a real DNS server. */
const lookup: LookupAll = (hostname) => {
  askedNames.push(hostname);
  const table: Record<string, string> = { 'inside.test': '127.0.0.2', localhost: '127.0.0.1' };
  const address = table[hostname];
  if (address === undefined) return Promise.reject(new Error(`getaddrinfo ENOTFOUND ${hostname}`));
  return Promise.resolve([{ address, family: 4 } satisfies ResolvedAddress]);
};

beforeAll(async () => {
  db = testDb();
  [fixture, otherLoopback, deniedPort] = await Promise.all([
    listen('127.0.0.1', fixturePage),
    listen('127.0.0.2', (_req, res) => res.end(SECRET)),
    listen('127.0.0.1', (_req, res) => res.end(SECRET)),
  ]);
  const env = { TARGET_ALLOW: testTargetAllow(), TARGET_DENY: `127.0.0.1:${deniedPort.port}` };
  api = await startApi(env);
  worker = await startWorkerService(
    readWorkerConfig({ ...process.env, ...env, PUBLIC_BASE_URL: api.url, WORKER_CONCURRENCY: '2' }),
    { logger: memoryLogger('worker').logger, reconcile: false, lookup },
  );
  const tenant = await createTenant(db);
  workspaceId = tenant.workspace.id;
  key = tenant.key;
  client = apiClient(api.url, key);
}, 120_000);

afterAll(async () => {
  await worker.stop();
  await api.close();
  for (const l of [fixture, otherLoopback, deniedPort]) {
    l.server.closeAllConnections();
    l.server.close();
  }
  await db.$disconnect();
});

describe('the API refuses internal targets at enqueue', () => {
  // Every spelling of the metadata address, private ranges, the unspecified address, loopback beyond
  // the allowed address, and the deployment's own services (which stay closed with loopback allowed).
  const FORMS: ReadonlyArray<[string, string]> = [
    ['http://169.254.169.254/', 'metadata'],
    ['http://2852039166/', 'metadata'],
    ['http://0xA9FEA9FE/', 'metadata'],
    ['http://0251.0376.0251.0376/', 'metadata'],
    ['http://0xA9.0376.169.0xFE/', 'metadata'],
    ['http://[::ffff:169.254.169.254]/', 'metadata'],
    ['http://[::ffff:a9fe:a9fe]/', 'metadata'],
    ['http://[fd00:ec2::254]/', 'metadata'],
    ['http://metadata.google.internal/', 'metadata'],
    ['http://169.254.1.1/', 'link_local'],
    ['http://[fe80::1]/', 'link_local'],
    ['http://10.0.0.1/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://[fc00::1]/', 'private'],
    ['http://[::ffff:10.0.0.1]/', 'private'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://127.0.0.2/', 'loopback'],
    ['http://127.0.0.1:5432/', 'protected_endpoint'],
    ['http://127.0.0.1:6379/', 'protected_endpoint'],
    ['http://localhost:6379/', 'protected_endpoint'],
    ['http://[::1]:5432/', 'protected_endpoint'],
    ['http://127.0.0.1:22/', 'unsafe_port'],
  ];

  beforeAll(async () => {
    await applyProject(db, workspaceId, {
      slug: 'enqueue',
      name: 'Enqueue',
      baseUrl: `http://127.0.0.1:${fixture.port}`,
      suites: [{ slug: 's', name: 'S', tests: [{ key: 't', name: 'T', steps: [{ action: 'goto', url: '/' }] }] }],
    });
  });

  it.each(FORMS)('%s is a 422 target_not_allowed (rule %s) and creates nothing', async (baseUrl, rule) => {
    const before = await db.run.count({ where: { workspaceId } });
    const res = await fetch(`${api.url}/api/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectSlug: 'enqueue', baseUrl }),
    });
    const body = await problemOf(res);
    expect(res.status).toBe(422);
    expect(body.code).toBe('target_not_allowed');
    expect(body.detail).toContain(`(rule: ${rule})`);
    expect(await db.run.count({ where: { workspaceId } })).toBe(before);
  });

  it("refuses what the workspace's own deny list names, and only in that workspace", async () => {
    await db.workspace.update({ where: { id: workspaceId }, data: { targetDeny: `127.0.0.1:${fixture.port}` } });
    try {
      const res = await fetch(`${api.url}/api/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ projectSlug: 'enqueue' }),
      });
      expect(res.status).toBe(422);
      expect((await problemOf(res)).detail).toContain('(rule: workspace_deny)');
    } finally {
      await db.workspace.update({ where: { id: workspaceId }, data: { targetDeny: null } });
    }
  });
});

describe('the worker blocks every way a page reaches a denied target', () => {
  type Case = { name: string; way: Way; to: string; host: string; rule: string };
  const cases: Case[] = [];
  let runs: Map<string, Run>;

  beforeAll(async () => {
    const other = `http://127.0.0.2:${otherLoopback.port}/secret`;
    const denied = `http://127.0.0.1:${deniedPort.port}/secret`;
    for (const way of EVERY_WAY) {
      cases.push({ name: `${way} to 127.0.0.2`, way, to: other, host: '127.0.0.2', rule: 'loopback' });
      cases.push({ name: `${way} to the denied port`, way, to: denied, host: '127.0.0.1', rule: 'deny_list' });
    }
    for (const way of ['r302', 'fetch'] as const) {
      const name = `http://inside.test:${otherLoopback.port}/secret`;
      cases.push({ name: `${way} to a name of 127.0.0.2`, way, to: name, host: 'inside.test', rule: 'loopback' });
      for (const [what, url] of [
        ['Postgres', 'http://127.0.0.1:5432/'],
        ['Redis', 'http://127.0.0.1:6379/'],
        ['the API', `${api.url}/readyz`],
      ] as const) {
        cases.push({ name: `${way} to ${what}`, way, to: url, host: '127.0.0.1', rule: 'protected_endpoint' });
      }
    }
    await applyProject(db, workspaceId, {
      slug: 'ssrf',
      name: 'SSRF',
      baseUrl: `http://127.0.0.1:${fixture.port}`,
      suites: [
        {
          slug: 'all',
          name: 'All',
          tests: cases.map((c, i) => ({ key: `c${i}`, name: c.name, timeoutMs: 20_000, steps: stepsFor(c.way, c.to) })),
        },
      ],
    });
    const suiteRunId = await client.createSuiteRun({ projectSlug: 'ssrf', suiteSlug: 'all' });
    const suiteRun = await client.waitSuiteRun(suiteRunId);
    runs = new Map<string, Run>();
    for (const t of suiteRun.tests) runs.set(t.name, await client.getRun(t.runId));
  }, 240_000);

  it('ends every run error/target_blocked naming the host and the rule, quoting nothing of the target', () => {
    const seen = cases.map((c) => {
      const run = runs.get(c.name);
      return {
        name: c.name,
        status: run?.status,
        code: run?.error?.code,
        namesHostAndRule: !!run?.result_summary.includes(c.host) && run.result_summary.includes(`(rule: ${c.rule})`),
        quotesTarget: !!run && JSON.stringify(run).includes(SECRET),
      };
    });
    expect(seen).toEqual(
      cases.map((c) => ({
        name: c.name,
        status: 'error',
        code: 'target_blocked',
        namesHostAndRule: true,
        quotesTarget: false,
      })),
    );
  });

  it('never connected to a denied listener, and resolved names only through the table', () => {
    expect(otherLoopback.connections).toBe(0);
    expect(deniedPort.connections).toBe(0);
    expect(fixture.connections).toBeGreaterThan(0);
    expect(askedNames).toContain('inside.test');
  });
});

describe("a workspace's own deny list holds in the worker", () => {
  let narrowed: Listener;

  beforeAll(async () => {
    narrowed = await listen('127.0.0.1', (_req, res) => res.end(SECRET));
  });

  afterAll(() => {
    narrowed.server.closeAllConnections();
    narrowed.server.close();
  });

  it('blocks a redirect to a target only that workspace denies, and never connects to it', async () => {
    const tenant = await createTenant(db);
    await db.workspace.update({
      where: { id: tenant.workspace.id },
      data: { targetDeny: `127.0.0.1:${narrowed.port}` },
    });
    await applyProject(db, tenant.workspace.id, {
      slug: 'narrow',
      name: 'Narrow',
      baseUrl: `http://127.0.0.1:${fixture.port}`,
      suites: [
        {
          slug: 's',
          name: 'S',
          tests: [{ key: 't', name: 'T', steps: stepsFor('r302', `http://127.0.0.1:${narrowed.port}/secret`) }],
        },
      ],
    });
    const own = apiClient(api.url, tenant.key);
    const suiteRun = await own.waitSuiteRun(await own.createSuiteRun({ projectSlug: 'narrow', suiteSlug: 's' }));
    const [entry] = suiteRun.tests;
    if (!entry) throw new Error('the suite run has no test');
    const run = await own.getRun(entry.runId);
    expect(run).toMatchObject({ status: 'error', error: { code: 'target_blocked' } });
    expect(run.result_summary).toContain('(rule: workspace_deny)');
    expect(JSON.stringify(run)).not.toContain(SECRET);
    expect(narrowed.connections).toBe(0);
  }, 60_000);
});
