import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Run } from '@testrun/contracts';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import type { LookupAll } from '@testrun/core/target-policy';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { apiClient, memoryLogger, startApi } from '../e2e/support';
import { createTenant, testDb } from '../support/harness';

/*
 * The deployment's own services reached through another address of the machine
 * (docs/reliability/ssrf.md). TARGET_ALLOW=127.0.0.0/8, as docs/NETWORK_POLICY.md suggests for a
 * test set-up. The API, its metrics port and the worker's HTTP server get port numbers known in
 * advance; on other loopback addresses this file listens at those same numbers (and at Postgres's
 * and Redis's, when they are free there) and counts every connection. The worker's egress proxy
 * must refuse them all as `protected_endpoint`, while the allowed fixture on 127.0.0.1 still works.
 */

const SECRET = 'SECRET-INTERNAL-ANSWER';

/** A listener owned by this file that counts every TCP connection it accepts. */
interface Decoy {
  server: Server;
  host: string;
  port: number;
  connections: number;
}

async function listen(
  host: string,
  port: number,
  handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end(SECRET),
): Promise<Decoy | undefined> {
  const server = createServer(handler);
  const decoy: Decoy = { server, host, port, connections: 0 };
  server.on('connection', () => (decoy.connections += 1));
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, host, () => resolve(true));
  });
  if (!bound) return undefined;
  decoy.port = (server.address() as AddressInfo).port;
  return decoy;
}

async function mustListen(host: string, port = 0, handler?: Parameters<typeof listen>[2]): Promise<Decoy> {
  const decoy = await listen(host, port, handler);
  if (!decoy) throw new Error(`could not listen on ${host}:${port}`);
  return decoy;
}

const html = (body: string) => `<!doctype html><html><head><title>page</title></head><body>${body}</body></html>`;

/** The allowed fixture: a 302 to `to`, a page that fetches `to`, and a plain page. */
function fixturePage(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://fixture');
  const to = url.searchParams.get('to') ?? '/';
  if (url.pathname === '/r302') return void res.writeHead(302, { location: to }).end();
  if (url.pathname === '/fetch') {
    const script = `fetch(${JSON.stringify(to)}).then((r) => r.text()).catch(() => '').then((t) => { document.body.textContent = t; document.title = 'fetched'; });`;
    return void res.end(html(`<script>${script}</script>`));
  }
  res.end(html('<h1>fixture</h1>'));
}

function stepsFor(way: 'r302' | 'fetch', to: string) {
  const goto = { action: 'goto' as const, url: `/${way}?to=${encodeURIComponent(to)}` };
  return way === 'r302' ? [goto] : [goto, { action: 'expectTitle' as const, title: 'fetched' }];
}

/** The only resolver the worker gets: a table. */
const lookup: LookupAll = (hostname) => {
  const table: Record<string, string> = { 'inside.test': '127.0.0.2', localhost: '127.0.0.1' };
  const address = table[hostname];
  if (address === undefined) return Promise.reject(new Error(`getaddrinfo ENOTFOUND ${hostname}`));
  return Promise.resolve([{ address, family: 4 as const }]);
};

let db: Db;
let fixture: Decoy;
const decoys: Decoy[] = [];
/** Ports known before the services start: the API's, its metrics port and the worker's HTTP port. */
const ports = { api: 0, metrics: 0, workerHttp: 0 };
let api: Awaited<ReturnType<typeof startApi>>;
let worker: WorkerService;
let client: ReturnType<typeof apiClient>;
let key: string;
let workspaceId: string;

beforeAll(async () => {
  db = testDb();
  fixture = await mustListen('127.0.0.1', 0, fixturePage);
  // A decoy on 127.0.0.2 takes a free number; the real service then binds 127.0.0.1 at that number.
  for (const name of ['api', 'metrics', 'workerHttp'] as const) {
    const decoy = await mustListen('127.0.0.2');
    decoys.push(decoy, await mustListen('127.0.0.3', decoy.port));
    ports[name] = decoy.port;
  }
  // Postgres's and Redis's own numbers on other loopback addresses, unless something holds them there.
  for (const [host, port] of [
    ['127.0.0.2', 5432],
    ['127.0.0.3', 6379],
  ] as const) {
    const decoy = await listen(host, port);
    if (decoy) decoys.push(decoy);
  }
  const env = {
    TARGET_ALLOW: '127.0.0.0/8',
    PORT: String(ports.api),
    PUBLIC_BASE_URL: `http://127.0.0.1:${ports.api}`,
    METRICS_PORT: String(ports.metrics),
    WORKER_HTTP_PORT: String(ports.workerHttp),
    WORKER_HTTP_HOST: '127.0.0.1',
  };
  api = await startApi(env);
  worker = await startWorkerService(readWorkerConfig({ ...process.env, ...env, WORKER_CONCURRENCY: '2' }), {
    logger: memoryLogger('worker').logger,
    reconcile: false,
    lookup,
  });
  const tenant = await createTenant(db);
  key = tenant.key;
  workspaceId = tenant.workspace.id;
  client = apiClient(api.url, key);
}, 120_000);

afterAll(async () => {
  await worker.stop();
  await api.close();
  for (const l of [fixture, ...decoys]) {
    l.server.closeAllConnections();
    l.server.close();
  }
  await db.$disconnect();
});

/** The other-address forms of every protected port, as a page would spell them. */
function protectedForms(): Array<{ name: string; url: string; host: string }> {
  const forms = [
    { name: "the API's port on 127.0.0.2", url: `http://127.0.0.2:${ports.api}/healthz`, host: '127.0.0.2' },
    {
      name: "the API's port on [::ffff:127.0.0.3]",
      url: `http://[::ffff:127.0.0.3]:${ports.api}/readyz`,
      host: '::ffff:7f00:3',
    },
    { name: 'METRICS_PORT on 127.0.0.2', url: `http://127.0.0.2:${ports.metrics}/metrics`, host: '127.0.0.2' },
    { name: 'WORKER_HTTP_PORT on 127.0.0.2', url: `http://127.0.0.2:${ports.workerHttp}/metrics`, host: '127.0.0.2' },
    { name: 'WORKER_HTTP_PORT on 0.0.0.0', url: `http://0.0.0.0:${ports.workerHttp}/metrics`, host: '0.0.0.0' },
    { name: "the worker's own /metrics", url: `http://127.0.0.1:${ports.workerHttp}/metrics`, host: '127.0.0.1' },
    { name: 'Postgres on 127.0.0.2', url: 'http://127.0.0.2:5432/', host: '127.0.0.2' },
    { name: 'Redis on [::ffff:127.0.0.3]', url: 'http://[::ffff:127.0.0.3]:6379/', host: '::ffff:7f00:3' },
    { name: "a name of 127.0.0.2 at the API's port", url: `http://inside.test:${ports.api}/`, host: 'inside.test' },
  ];
  return forms;
}

describe('the API refuses them at enqueue', () => {
  it('answers 422 target_not_allowed naming protected_endpoint for each literal form', async () => {
    await applyProject(db, workspaceId, {
      slug: 'enqueue',
      name: 'Enqueue',
      baseUrl: `http://127.0.0.1:${fixture.port}`,
      suites: [{ slug: 's', name: 'S', tests: [{ key: 't', name: 'T', steps: [{ action: 'goto', url: '/' }] }] }],
    });
    const literal = protectedForms().filter((form) => !form.url.includes('inside.test'));
    const answers = [];
    for (const form of literal) {
      const res = await fetch(`${api.url}/api/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ projectSlug: 'enqueue', baseUrl: form.url }),
      });
      const body = (await res.json()) as { code?: string; detail?: string };
      answers.push({
        name: form.name,
        status: res.status,
        code: body.code,
        rule: /\(rule: (\w+)\)/.exec(body.detail ?? '')?.[1],
      });
    }
    expect(answers).toEqual(
      literal.map((form) => ({ name: form.name, status: 422, code: 'target_not_allowed', rule: 'protected_endpoint' })),
    );
    expect(await db.run.count({ where: { workspaceId } })).toBe(0);
  });
});

describe('the worker refuses them on every redirect and request, and never connects', () => {
  type Case = { name: string; way: 'r302' | 'fetch'; to: string; host: string };
  const cases: Case[] = [];
  let runs: Map<string, Run>;
  let allowed: Run;

  beforeAll(async () => {
    for (const form of protectedForms()) {
      for (const way of ['r302', 'fetch'] as const)
        cases.push({ name: `${way} to ${form.name}`, way, to: form.url, host: form.host });
    }
    const tests = cases.map((c, i) => ({
      key: `c${i}`,
      name: c.name,
      timeoutMs: 20_000,
      steps: stepsFor(c.way, c.to),
    }));
    tests.push({
      key: 'ok',
      name: 'allowed',
      timeoutMs: 20_000,
      steps: stepsFor('fetch', `http://127.0.0.1:${fixture.port}/`),
    });
    await applyProject(db, workspaceId, {
      slug: 'ports',
      name: 'Ports',
      baseUrl: `http://127.0.0.1:${fixture.port}`,
      suites: [{ slug: 'all', name: 'All', tests }],
    });
    const suiteRun = await client.waitSuiteRun(await client.createSuiteRun({ projectSlug: 'ports', suiteSlug: 'all' }));
    runs = new Map<string, Run>();
    for (const t of suiteRun.tests) runs.set(t.name, await client.getRun(t.runId));
    const ok = runs.get('allowed');
    if (!ok) throw new Error('the allowed test did not run');
    allowed = ok;
  }, 300_000);

  it('ends each run error/target_blocked naming the host and protected_endpoint, quoting nothing', () => {
    const seen = cases.map((c) => {
      const run = runs.get(c.name);
      return {
        name: c.name,
        status: run?.status,
        code: run?.error?.code,
        summary: run?.result_summary.includes(c.host) && run.result_summary.includes('(rule: protected_endpoint)'),
        quotes: !!run && JSON.stringify(run).includes(SECRET),
      };
    });
    expect(seen).toEqual(
      cases.map((c) => ({ name: c.name, status: 'error', code: 'target_blocked', summary: true, quotes: false })),
    );
  });

  it('never connected to a listener at a protected port, while the allowed fixture served its run', () => {
    expect(decoys.length).toBeGreaterThanOrEqual(6);
    expect(decoys.map((d) => ({ at: `${d.host}:${d.port}`, connections: d.connections }))).toEqual(
      decoys.map((d) => ({ at: `${d.host}:${d.port}`, connections: 0 })),
    );
    expect(allowed.status).toBe('passed');
    expect(fixture.connections).toBeGreaterThan(0);
  });
});
