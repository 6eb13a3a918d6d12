import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { compileValidator, Deployment } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { packFixture } from '../support/fixture-bundles';
import { createTenant, testDb } from '../support/harness';
import { apiClient, memoryLogger, startApi } from './support';

// What the Playwright end-to-end tests need besides the service: the shop the fixture project
// (test/fixtures/pw-shop) tests, another origin that records what reaches it, and the bundle.

export const SHOP_PASSWORD = 'pw-Secr3t-7781';

const page = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The shop: a login that sets a cookie when the password is right, a catalog behind it, a flaky page, an echo of headers. */
export async function startShop(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://shop.invalid');
    const html = (status: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
      res.end(body);
    };
    if (url.pathname === '/login' && req.method === 'POST') {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const ok = new URLSearchParams(body).get('password') === SHOP_PASSWORD;
        if (!ok) return html(401, page('Login', '<h1>Wrong password</h1>'));
        html(303, '', { location: '/catalog', 'set-cookie': 'session=ok; Path=/' });
      });
      return;
    }
    if (url.pathname === '/login')
      return html(
        200,
        page(
          'Login',
          '<form method="post" action="/login"><label>Password <input name="password" type="password"></label><button>Sign in</button></form>',
        ),
      );
    if (url.pathname === '/catalog') {
      if (!(req.headers.cookie ?? '').includes('session=ok')) return html(302, '', { location: '/login' });
      const items = ['Red shoes', 'Blue shoes', 'Green shoes'].map((p) => `<li class="product">${p}</li>`).join('');
      return html(200, page('Catalog', `<h1>Catalog</h1><ul>${items}</ul>`));
    }
    if (url.pathname === '/flaky')
      return html(200, page('Flaky', `<h1>${url.searchParams.get('attempt') === '0' ? 'Not yet' : 'Ready'}</h1>`));
    if (url.pathname === '/echo-headers') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(req.headers));
    }
    html(404, page('Not found', '<h1>Not found</h1>'));
  });
  const url = await listen(server);
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Another origin: it records the headers of every request it gets; `/cached…` answers are cacheable, and count their URL's requests. */
export async function startRecorder(): Promise<{ url: string; seen: IncomingHttpHeaders[]; close(): Promise<void> }> {
  const seen: IncomingHttpHeaders[] = [];
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    seen.push(req.headers);
    if (req.url?.startsWith('/cached')) {
      // Cacheable for ten minutes; the body counts the requests that reached the site for this URL.
      const count = (hits.get(req.url) ?? 0) + 1;
      hits.set(req.url, count);
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=600' });
      res.end(String(count));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(page('Other', '<h1>Other origin</h1>'));
  });
  const url = await listen(server);
  return { url, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const checkDeployment = compileValidator(Deployment);

/** Uploads the fixture project's bundle and deploys it through the API, as `testrun deploy` does (a preview unless `activate`). */
export async function deployFixture(
  apiUrl: string,
  key: string,
  projectFile: string,
  project: Record<string, unknown> & { slug: string },
  activate = true,
): Promise<Deployment> {
  const { body, digest } = await packFixture(projectFile, project);
  const authorization = `Bearer ${key}`;
  const base = `${apiUrl}/api/v1/projects/${project.slug}`;
  const uploaded = await fetch(`${base}/bundles/${digest}`, {
    method: 'PUT',
    headers: { authorization, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(body),
  });
  if (uploaded.status !== 200 && uploaded.status !== 201) throw new Error(`upload: ${uploaded.status}`);
  const deployed = await fetch(`${base}/deployments`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ project, bundle: digest, activate }),
  });
  const answer = (await deployed.json()) as unknown;
  const checked = checkDeployment(answer);
  if (deployed.status !== 201 || !checked.ok) throw new Error(`deploy: ${deployed.status} ${JSON.stringify(answer)}`);
  return checked.value;
}

/** A project file of the fixture's `config` with one suite, of the tests `suite.playwright` selects (each named as its slug). */
export function oneSuiteProject(
  slug: string,
  baseUrl: string,
  config: string,
  suite: { slug: string; playwright: Record<string, unknown> },
) {
  return { slug, name: slug, baseUrl, playwright: { config }, suites: [{ ...suite, name: suite.slug }] };
}

/** A new tenant (a key that may deploy), the fixture project deployed for it, and an API client of its key. */
export async function deployForTenant(
  parts: Pick<PlaywrightSiteParts, 'db' | 'api'>,
  projectFile: string,
  project: Record<string, unknown> & { slug: string },
) {
  const tenant = await createTenant(parts.db, { scopes: ['deploy'] });
  await deployFixture(parts.api.url, tenant.key, projectFile, project);
  return { tenant, client: apiClient(parts.api.url, tenant.key) };
}

/** What {@link usePlaywrightSite} starts for a test file. */
export interface PlaywrightSiteParts {
  db: Db;
  site: Awaited<ReturnType<typeof startRecorder>>;
  api: Awaited<ReturnType<typeof startApi>>;
}

/** What a test file runs its tests on besides the service: started last, stopped first. */
export interface SiteWorkers {
  start?: () => Promise<void>;
  stop?: () => unknown;
}

/**
 * The parts of a Playwright end-to-end file, started before its tests and stopped after them: the
 * test database, a site that records what reaches it and the API, and the file's `workers`.
 */
export function usePlaywrightSite(workers: SiteWorkers = {}): PlaywrightSiteParts {
  const parts = {} as PlaywrightSiteParts;
  beforeAll(async () => {
    parts.db = testDb();
    [parts.site, parts.api] = await Promise.all([startRecorder(), startApi()]);
    await workers.start?.();
  });
  afterAll(async () => {
    await workers.stop?.();
    await Promise.all([parts.api.close(), parts.site.close()]);
    await parts.db.$disconnect();
  });
  return parts;
}

/** What {@link usePlaywrightWorker} starts for a test file. */
export interface PlaywrightWorkerParts extends PlaywrightSiteParts {
  worker: WorkerService;
  workerLog: ReturnType<typeof memoryLogger>;
}

/**
 * {@link usePlaywrightSite} with a worker whose environment has `env` added, its reconciler run
 * when `reconcile` says so.
 */
export function usePlaywrightWorker(env: Record<string, string>, reconcile = false): PlaywrightWorkerParts {
  const parts = usePlaywrightSite({
    start: async () => {
      parts.worker = await startWorkerService(readWorkerConfig({ ...process.env, ...env }), {
        logger: parts.workerLog.logger,
        reconcile,
      });
    },
    stop: () => parts.worker.stop(),
  }) as PlaywrightWorkerParts;
  parts.workerLog = memoryLogger('worker');
  return parts;
}

/** A team's repository written from `files` (path in the repository → text) in a new folder named after `prefix`. */
export function writeTeamRepository(prefix: string, files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}
