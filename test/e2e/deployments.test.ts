import type { Db } from '@testrun/core/db';
import { compileValidator, Deployment, type ProjectFile } from '@testrun/contracts';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { createTenant, testDb } from '../support/harness';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { apiClient, memoryLogger, startApi } from './support';

/**
 * Deployments end to end with the real worker: a run executes the version it was enqueued with,
 * even when another version is activated before a worker claims it; a rollback makes the next run
 * execute the old version again; a preview runs only when asked for by its deploymentId.
 */
jest.setTimeout(120_000);

let db: Db;
let site: FixtureSite;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: WorkerService | undefined;
let client: ReturnType<typeof apiClient>;
let key: string;

const checkDeployment = compileValidator(Deployment);

beforeAll(async () => {
  db = testDb();
  site = await startFixtureSite();
  api = await startApi();
  const tenant = await createTenant(db, { scopes: ['deploy'] });
  key = tenant.key;
  client = apiClient(api.url, tenant.key);
});

afterAll(async () => {
  await worker?.stop();
  await api.close();
  await site.close();
  await db.$disconnect();
});

/** Version `page` of the project: its one test expects the About heading on that page (so only /about passes). */
function version(page: string): ProjectFile {
  return {
    slug: 'shop',
    name: 'Shop',
    baseUrl: site.url,
    suites: [
      {
        slug: 'smoke',
        name: 'Smoke',
        tests: [
          {
            key: 'about',
            name: 'About page',
            steps: [
              { action: 'goto', url: page },
              { action: 'expectText', selector: 'h1', text: 'About Testrun Shop', timeoutMs: 500 },
            ],
          },
        ],
      },
    ],
  };
}

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const checked = checkDeployment((await res.json()) as unknown);
  if (res.status >= 300 || !checked.ok) throw new Error(`${method} ${path}: HTTP ${res.status}`);
  return checked.value;
}

const deploy = (file: ProjectFile, activate = true) =>
  call('POST', '/api/v1/projects/shop/deployments', { project: file, activate });
const activate = (id: string) => call('POST', `/api/v1/projects/shop/deployments/${id}/activate`);

it('each run executes its own version: queued before an activation, after it, after a rollback, and a preview', async () => {
  const v1 = await deploy(version('/about'));
  const testId = v1.tests[0]?.testId ?? '';
  // No worker yet: this run waits in the queue while version 2 becomes the active one.
  const queuedBefore = await client.createRun({ testId });
  const v2 = await deploy(version('/'));
  expect(v2.tests[0]?.testId).toBe(testId);
  const afterV2 = await client.createRun({ testId });

  worker = await startWorkerService(readWorkerConfig({ ...process.env, WORKER_CONCURRENCY: '2' }), {
    logger: memoryLogger('worker').logger,
    reconcile: false,
  });
  const [before, after] = await Promise.all([client.waitRun(queuedBefore), client.waitRun(afterV2)]);
  expect([before.status, before.deployment_id]).toEqual(['passed', v1.id]);
  expect([after.status, after.deployment_id]).toEqual(['failed', v2.id]);

  // Roll back to version 1: the next run passes again, under the same testId.
  await activate(v1.id);
  const rolledBack = await client.waitRun(await client.createRun({ testId }));
  expect([rolledBack.status, rolledBack.test_id, rolledBack.deployment_id]).toEqual(['passed', testId, v1.id]);

  // A preview of the broken version runs only by its id; the plain run keeps the active version 1.
  const preview = await deploy(version('/'), false);
  const [ofPreview, plain] = await Promise.all([
    client.createRun({ testId, deploymentId: preview.id }).then((id) => client.waitRun(id)),
    client.createRun({ testId }).then((id) => client.waitRun(id)),
  ]);
  expect([ofPreview.status, ofPreview.deployment_id]).toEqual(['failed', preview.id]);
  expect([plain.status, plain.deployment_id]).toEqual(['passed', v1.id]);
});
