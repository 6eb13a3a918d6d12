import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Run, SuiteRun } from '@testrun/contracts';
import type { S3ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { deriveKeys } from '@testrun/core/secrets';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { purgeExpired } from '../../apps/worker/src/housekeeping/retention';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { addWebhookEndpoint } from '../../packages/admin/src/operations';
import { testDb, testSecret } from '../support/harness';
import { present } from '../support/present';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { deployForTenant, oneSuiteProject, startRecorder } from './playwright-site';
import { memoryLogger, startApi, waitUntil, type apiClient } from './support';

/**
 * Visual comparison with the artifact store on S3 (a real S3-protocol server on loopback), through
 * the real API, worker, sandbox and Chromium, on the fixture test/fixtures/pw-visual: the first run's
 * images are stored in the bucket as baselines; the next run's sandbox gets them from there, so a
 * changed page fails `screenshot_changed`, and the view serves the baseline and the image taken,
 * byte for byte the bucket's objects. Each suite_run.finished webhook, delivered to a receiver on
 * loopback, counts the changes awaiting approval. Retention then purges the changed run, and the
 * collection deletes its images from the bucket while the baselines stay.
 */
jest.setTimeout(300_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-visual');
const SLUG = 'pw-visual-s3';
const PREFIX = 'e2e/visual';

let s3: S3TestServer;
let bucket: S3ArtifactStore;
let db: Db;
let site: Awaited<ReturnType<typeof startRecorder>>;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: WorkerService;
let receiver: Server;
let client: ReturnType<typeof apiClient>;
let key: string;
/** suite_run.finished bodies the receiver got, by suite run id. */
const finished = new Map<string, SuiteRun>();

beforeAll(async () => {
  s3 = await startS3Server();
  bucket = s3.store(PREFIX);
  db = testDb();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SuiteRun & { event: string };
      if (body.event === 'suite_run.finished') finished.set(body.id, body);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  // In this process, as in production's: the SDK finds the credentials in the environment.
  Object.assign(process.env, s3.env(PREFIX));
  [site, api] = await Promise.all([startRecorder(), startApi(s3.env(PREFIX))]);
  const env = { ...s3.env(PREFIX), WORKER_CONCURRENCY: '1', WEBHOOK_RELAY_INTERVAL_MS: '200' };
  worker = await startWorkerService(readWorkerConfig({ ...process.env, ...env }), {
    logger: memoryLogger('worker').logger,
    reconcile: false,
  });
  const project = oneSuiteProject(SLUG, site.url, 'e2e/playwright.config.ts', {
    slug: 'all',
    playwright: { project: 'chromium' },
  });
  const deployed = await deployForTenant({ db, api }, path.join(FIXTURE, 'testrun.yaml'), project);
  ({ client, key } = { client: deployed.client, key: deployed.tenant.key });
  const port = (receiver.address() as AddressInfo).port;
  await addWebhookEndpoint(db, deriveKeys(testSecret()).headers, {
    workspaceId: deployed.tenant.workspace.id,
    url: `http://127.0.0.1:${port}/hooks`,
    events: ['suite_run.finished'],
  });
});
afterAll(async () => {
  await worker.stop();
  await Promise.all([api.close(), site.close()]);
  await new Promise((resolve) => receiver.close(resolve));
  bucket.close();
  await s3.close();
  await db.$disconnect();
});

/** A suite run of the fixture with the page in `shade`, its runs by test name, and its suite_run.finished body. */
async function suiteRun(shade: string) {
  const id = await client.createSuiteRun({ projectSlug: SLUG, suiteSlug: 'all', variables: { SHADE: shade } });
  const suite = await client.waitSuiteRun(id);
  const runs: Record<string, Run> = {};
  for (const t of suite.tests) runs[t.name] = await client.getRun(t.runId);
  const webhook = await waitUntil(() => Promise.resolve(finished.get(id)));
  return { suite, runs, webhook, home: present(runs['home looks right'], 'the screenshot test') };
}

/** The base of a run's view links, from the Link header of GET run. */
async function viewBase(runId: string): Promise<string> {
  const res = await fetch(`${api.url}/api/v1/runs/${runId}`, { headers: { authorization: `Bearer ${key}` } });
  const link = new URL(present(/<([^>]+)>/.exec(res.headers.get('link') ?? '')?.[1], 'the view link'));
  return `${api.url}${link.pathname}`;
}

/** The bytes the run's view serves for the attachment `name`. */
async function served(run: Run, name: string): Promise<Buffer> {
  const attachment = present(
    run.attachments?.find((a) => a.name === name),
    name,
  );
  const res = await fetch(`${await viewBase(run.id)}/artifacts/${attachment.id}`);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

let baselineKeys: string[];
let changedKeys: string[];
let changedSuiteRun: string;

it("keeps a first run's images in the bucket as baselines; the webhook counts them as new", async () => {
  const { suite, home, webhook } = await suiteRun('teal');
  expect(home.status).toBe('passed');
  // The test's database is its own: these are the fixture's.
  const baselines = await db.baseline.findMany();
  expect(baselines.map((b) => path.posix.basename(b.path)).sort()).toEqual([
    'heading-chromium-linux.png',
    'home-chromium-linux.png',
    'label-chromium-linux.txt',
  ]);
  baselineKeys = baselines.map((b) => b.storageKey);
  for (const b of baselines) expect((await bucket.get(b.storageKey))?.length).toBe(b.sizeBytes);
  expect([suite.visual_new_count, suite.visual_changed_count]).toEqual([3, 0]);
  expect([webhook.visual_new_count, webhook.visual_changed_count]).toEqual([3, 0]);
});

it('places the baselines from the bucket: a changed page fails, the view serves the baseline and the image taken', async () => {
  const { suite, home, webhook } = await suiteRun('crimson');
  expect(home.status).toBe('failed');
  expect(home.visual_changes?.map((c) => [c.name, c.kind])).toEqual([
    ['heading.png', 'changed'],
    ['home.png', 'changed'],
  ]);
  changedSuiteRun = suite.id;
  const changes = await db.visualChange.findMany({ where: { runId: home.id }, orderBy: { name: 'asc' } });
  changedKeys = changes.map((c) => c.storageKey);
  const baseline = present(
    await db.baseline.findFirst({ where: { path: { endsWith: 'home-chromium-linux.png' } } }),
    'the home baseline',
  );
  const homeChange = present(changes[1], 'the home change');
  // Playwright attached the baseline it compared against (placed from the bucket) and what it took.
  const inBucket = async (storageKey: string) => present(await bucket.get(storageKey), storageKey);
  expect((await served(home, 'home-expected.png')).equals(await inBucket(baseline.storageKey))).toBe(true);
  expect((await served(home, 'home-actual.png')).equals(await inBucket(homeChange.storageKey))).toBe(true);
  expect([suite.visual_new_count, suite.visual_changed_count]).toEqual([0, 2]);
  expect([webhook.status, webhook.visual_new_count, webhook.visual_changed_count]).toEqual(['failed', 0, 2]);
});

it('retention purges the changed run and deletes its images from the bucket; the baselines stay', async () => {
  for (const k of changedKeys) expect(await bucket.get(k)).not.toBeNull();
  await db.run.updateMany({
    where: { suiteRunId: changedSuiteRun },
    data: { createdAt: new Date(Date.now() - 100 * 24 * 60 * 60 * 1000) },
  });
  const defaults = { artifactDays: 30, runDays: 90 };
  // The images become candidates as the runs go; with no grace they are collected at once.
  const report = await purgeExpired({ db, store: bucket, defaults, imageGraceMs: 0 });
  expect([report.runs, report.images, report.done]).toEqual([2, 2, true]);
  for (const k of changedKeys) expect(await bucket.get(k)).toBeNull();
  for (const k of baselineKeys) expect(await bucket.get(k)).not.toBeNull();
});
