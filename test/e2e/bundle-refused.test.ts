import { BUNDLE_LIMITS } from '@testrun/contracts';
import { createArtifactStore } from '@testrun/core/artifact-store';
import { bundleKey } from '@testrun/core/bundles';
import type { Db } from '@testrun/core/db';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { createTenant, sampleProject, testDb } from '../support/harness';
import { bombBundle, digestOf, tarGz } from '../support/hostile-bundles';
import { memoryLogger, startApi } from './support';

/**
 * A deployment whose bundle the worker refuses says why: the real API and the real worker, the
 * bundle put in the artifact store directly (as one stored before the API held bundles to today's
 * rules would be). A bundle carrying the service's own @playwright/test, or one that unpacks past
 * BUNDLE_LIMITS.maxUnpackedBytes, is 422 `invalid_bundle` naming it at /bundle, not a 503 "no worker
 * listed the tests in time".
 */
jest.setTimeout(180_000);

let db: Db;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: WorkerService;
let key: string;
let workspaceId: string;

beforeAll(async () => {
  db = testDb();
  api = await startApi();
  const tenant = await createTenant(db, { scopes: ['deploy'] });
  [key, workspaceId] = [tenant.key, tenant.workspace.id];
  worker = await startWorkerService(readWorkerConfig({ ...process.env, WORKER_CONCURRENCY: '1' }), {
    logger: memoryLogger('worker').logger,
    reconcile: false,
  });
});

afterAll(async () => {
  await worker.stop();
  await api.close();
  await db.$disconnect();
});

async function deployStored(bytes: Buffer) {
  const digest = digestOf(bytes);
  await createArtifactStore(readWorkerConfig(process.env).artifacts).put(bundleKey(workspaceId, digest), bytes);
  const project = { ...sampleProject('pw'), playwright: { config: 'playwright.config.js' }, suites: [] };
  const res = await fetch(`${api.url}/api/v1/projects/pw/deployments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ project: { ...project, suites: [{ slug: 'all', playwright: {} }] }, bundle: digest }),
  });
  return { status: res.status, body: (await res.json()) as { code: string; detail: string; errors?: unknown[] } };
}

it('a bundle carrying node_modules/@playwright/test: 422 invalid_bundle saying so', async () => {
  const bytes = await tarGz([
    { name: 'a.spec.js', content: "const { test } = require('@playwright/test'); test('t', () => {});\n" },
    { name: 'node_modules/@playwright/test/index.js', content: 'module.exports = require("./evil");\n' },
  ]);
  const { status, body } = await deployStored(bytes);
  expect([status, body.code]).toEqual([422, 'invalid_bundle']);
  expect(body.detail).toContain('node_modules/@playwright/test, a package the service provides');
  expect(body.errors).toEqual([{ path: '/bundle', message: expect.stringContaining('@playwright/test') as string }]);
});

it('a bundle unpacking past the cap: 422 invalid_bundle naming BUNDLE_LIMITS.maxUnpackedBytes', async () => {
  const bomb = await bombBundle(BUNDLE_LIMITS.maxUnpackedBytes / (1024 * 1024) + 1);
  const { status, body } = await deployStored(bomb);
  expect([status, body.code]).toEqual([422, 'invalid_bundle']);
  expect(body.detail).toContain(`(limit BUNDLE_LIMITS.maxUnpackedBytes = ${BUNDLE_LIMITS.maxUnpackedBytes})`);
});
