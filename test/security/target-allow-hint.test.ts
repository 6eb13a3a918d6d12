import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { apiClient, memoryLogger, startApi } from '../e2e/support';
import { createTenant, testDb } from '../support/harness';
import { present } from '../support/present';

/*
 * A new user's first local target: loopback is closed by default, so the refusal must say how to
 * open it. Two set-ups a user reaches: TARGET_ALLOW set nowhere (the API refuses at enqueue), and
 * set for the API but not for the worker (the worker refuses the run's base URL).
 */

let db: Db;
let site: Server;
let siteUrl: string;
let sitePort: number;

/** The hint names the site's address and port: the narrow rule that opens it and nothing else there. */
const hint = () =>
  new RegExp(
    `to allow it, set TARGET_ALLOW=127\\.0\\.0\\.1:${sitePort} in the environment of the API and of every worker`,
  );

beforeAll(async () => {
  db = testDb();
  site = createServer((_req, res) => res.end('<!doctype html><title>local</title><h1>local</h1>'));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  sitePort = (site.address() as AddressInfo).port;
  siteUrl = `http://127.0.0.1:${sitePort}`;
});

afterAll(async () => {
  site.closeAllConnections();
  site.close();
  await db.$disconnect();
});

async function tenantWithProject() {
  const tenant = await createTenant(db);
  await applyProject(db, tenant.workspace.id, {
    slug: 'local',
    name: 'Local',
    baseUrl: siteUrl,
    suites: [{ slug: 's', name: 'S', tests: [{ key: 't', name: 'T', steps: [{ action: 'goto', url: '/' }] }] }],
  });
  return tenant;
}

describe('with TARGET_ALLOW set nowhere', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  beforeAll(async () => {
    api = await startApi({ TARGET_ALLOW: '' });
  });
  afterAll(() => api.close());

  it("the enqueue's 422 target_not_allowed names TARGET_ALLOW, the value and where to set it", async () => {
    const { key } = await tenantWithProject();
    const res = await fetch(`${api.url}/api/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectSlug: 'local', suiteSlug: 's' }),
    });
    const body = (await res.json()) as { code: string; detail: string };
    expect(res.status).toBe(422);
    expect(body.code).toBe('target_not_allowed');
    expect(body.detail).toContain('(rule: loopback)');
    expect(body.detail).toMatch(hint());
  });
});

describe('with TARGET_ALLOW set for the API only', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let worker: WorkerService;
  beforeAll(async () => {
    api = await startApi({ TARGET_ALLOW: `127.0.0.1:${sitePort}` });
    worker = await startWorkerService(
      readWorkerConfig({ ...process.env, TARGET_ALLOW: '', PUBLIC_BASE_URL: api.url, WORKER_CONCURRENCY: '1' }),
      { logger: memoryLogger('worker').logger, reconcile: false },
    );
  }, 120_000);
  afterAll(async () => {
    await worker.stop();
    await api.close();
  });

  it('the run ends error/target_blocked and its summary names TARGET_ALLOW and where to set it', async () => {
    const { key } = await tenantWithProject();
    const client = apiClient(api.url, key);
    const suiteRun = await client.waitSuiteRun(await client.createSuiteRun({ projectSlug: 'local', suiteSlug: 's' }));
    const run = await client.getRun(present(suiteRun.tests[0], "the suite run's run").runId);
    expect(run.status).toBe('error');
    expect(run.error?.code).toBe('target_blocked');
    expect(run.result_summary).toMatch(hint());
  }, 120_000);
});
