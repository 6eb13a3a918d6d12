import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProjectFile } from '@testrun/contracts';
import { applyProject } from '../../packages/admin/src/operations';
import { artifactKey, type S3ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { isVideoAvailable } from '../../apps/worker/src/run/video';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { createTenant, testDb } from '../support/harness';
import { present } from '../support/present';
import { stopProcess } from '../support/processes';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { apiClient, freePort, spawnService, waitForLog, waitUntil } from './support';

/**
 * Artifacts in an object store, end to end: an API process and a worker process started as
 * production starts them, both with ARTIFACTS_URL=s3://… on a real S3 server on loopback. A failing
 * run's screenshots, trace and video go to the bucket, and the view serves them byte for byte, in
 * ranges too; an outage of the store is a 503 in the view and a retried write in the worker.
 */
jest.setTimeout(120_000);

const PREFIX = 'e2e/artifacts';
const video = isVideoAvailable();
let s3: S3TestServer;
let bucket: S3ArtifactStore;
let db: Db;
let site: FixtureSite;
let apiUrl: string;
let apiKey: string;
let testId: string;
let client: ReturnType<typeof apiClient>;
const services: Array<{ child: ChildProcess; output: () => string }> = [];

const FAILING: ProjectFile['suites'][number]['tests'][number]['steps'] = [
  { action: 'goto', url: '/' },
  { action: 'expectText', selector: 'h1', text: 'Welcome to the shop', timeoutMs: 1_000 },
];

beforeAll(async () => {
  s3 = await startS3Server();
  bucket = s3.store(PREFIX);
  db = testDb();
  site = await startFixtureSite();
  const port = await freePort();
  const api = spawnService('api', {
    ...s3.env(PREFIX),
    PORT: String(port),
    RATE_LIMIT_PER_MINUTE: '100000',
    LOG_LEVEL: 'info',
  });
  const worker = spawnService('worker', {
    ...s3.env(PREFIX),
    WORKER_CONCURRENCY: '1',
    WORKER_VIDEO: video ? 'on' : 'off',
    LOG_LEVEL: 'info',
  });
  services.push(api, worker);
  await Promise.all([waitForLog(api, 'listening'), waitForLog(worker, 'worker ready')]);
  apiUrl = `http://127.0.0.1:${port}`;
  const tenant = await createTenant(db);
  apiKey = tenant.key;
  client = apiClient(apiUrl, tenant.key);
  const applied = await applyProject(db, tenant.workspace.id, {
    slug: 's3',
    name: 'S3',
    baseUrl: site.url,
    suites: [{ slug: 'main', name: 'Main', tests: [{ key: 'fails', name: 'fails', steps: FAILING }] }],
  });
  testId = present(applied.suites[0]?.tests[0]?.id, 'the test');
});

afterAll(async () => {
  await Promise.all(services.map((s) => stopProcess(s.child, 'SIGTERM')));
  bucket.close();
  await s3.close();
  await site.close();
  await db.$disconnect();
});

/** A failing run keeping everything; its id once it has ended. */
async function failingRun(): Promise<string> {
  const runId = await client.createRun({ testId, evidence: { trace: 'on', video: 'on', screenshots: 'on' } });
  const run = await client.waitRun(runId);
  expect(run.status).toBe('failed');
  return runId;
}

/** The base of a run's view links, from the Link header of GET run. */
async function viewBase(runId: string): Promise<string> {
  const res = await fetch(`${apiUrl}/api/v1/runs/${runId}`, { headers: { authorization: `Bearer ${apiKey}` } });
  const link = new URL(present(/<([^>]+)>/.exec(res.headers.get('link') ?? '')?.[1], 'the view link'));
  return `${apiUrl}${link.pathname}`;
}

it('both processes say where artifacts go, and never the credentials', () => {
  for (const service of services) {
    expect(service.output()).toContain(`s3://${s3.bucket}/${PREFIX} at ${s3.endpoint}`);
    expect(service.output()).not.toContain('S3RVER');
  }
});

it("stores a failing run's screenshots, trace and video in the bucket, and the view serves them exactly", async () => {
  const runId = await failingRun();
  const rows = await db.artifact.findMany({ where: { runId }, orderBy: { name: 'asc' } });
  expect(new Set(rows.map((r) => r.kind))).toEqual(
    new Set(video ? ['screenshot', 'trace', 'video'] : ['screenshot', 'trace']),
  );
  const base = await viewBase(runId);
  for (const row of rows) {
    const stored = present(await bucket.get(row.storageKey), `${row.kind} in the bucket`);
    expect(stored.length).toBe(row.sizeBytes);
    // Nothing on a local disk: the default directory holds no such file.
    expect(existsSync(path.resolve(__dirname, '../../.testrun/artifacts', row.storageKey))).toBe(false);
    const res = await fetch(`${base}/artifacts/${row.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(row.contentType);
    expect(Buffer.from(await res.arrayBuffer()).equals(stored)).toBe(true);
  }

  // The trace viewer reads a trace.zip in ranges: a suffix, the first byte, and past the end.
  const trace = present(
    rows.find((r) => r.kind === 'trace'),
    'the trace row',
  );
  const stored = present(await bucket.get(trace.storageKey), 'the trace');
  const size = stored.length;
  const url = `${base}/artifacts/${trace.id}`;
  const tail = await fetch(url, { headers: { range: 'bytes=-100' } });
  expect([tail.status, tail.headers.get('content-range')]).toEqual([206, `bytes ${size - 100}-${size - 1}/${size}`]);
  expect(Buffer.from(await tail.arrayBuffer()).equals(stored.subarray(size - 100))).toBe(true);
  const first = await fetch(url, { headers: { range: 'bytes=0-0' } });
  expect([first.status, first.headers.get('content-range'), await first.text()]).toEqual([
    206,
    `bytes 0-0/${size}`,
    stored.subarray(0, 1).toString('latin1'),
  ]);
  const beyond = await fetch(url, { headers: { range: `bytes=${size}-` } });
  expect([beyond.status, beyond.headers.get('content-range')]).toEqual([416, `bytes */${size}`]);
});

it('ends the read from S3 when the browser goes away mid-download', async () => {
  const runId = await failingRun();
  const { workspaceId } = await db.run.findUniqueOrThrow({ where: { id: runId }, select: { workspaceId: true } });
  // A recording far larger than the buffers between the bucket, the API and the browser.
  const big = randomBytes(16 * 1024 * 1024);
  const id = newId(ID_PREFIX.artifact);
  const storageKey = artifactKey(workspaceId, runId, id, 'long.webm');
  await bucket.put(storageKey, big);
  await db.artifact.create({
    data: {
      id,
      runId,
      workspaceId,
      attempt: 1,
      kind: 'video',
      name: 'long.webm',
      storageKey,
      contentType: 'video/webm',
      sizeBytes: big.length,
    },
  });
  const browser = new AbortController();
  const res = await fetch(`${await viewBase(runId)}/artifacts/${id}`, { signal: browser.signal });
  await present(res.body, 'the body').getReader().read();
  expect(s3.activeRequests()).toBe(1);
  browser.abort();
  for (let i = 0; i < 100 && s3.activeRequests() > 0; i++) await sleep(50);
  expect(s3.activeRequests()).toBe(0);
});

it('answers 503 with Retry-After while the store is down, and the worker keeps writing until it is back', async () => {
  const runId = await failingRun();
  const shot = await db.artifact.findFirstOrThrow({ where: { runId, kind: 'screenshot' } });
  const url = `${await viewBase(runId)}/artifacts/${shot.id}`;
  const worker = present(services[1], 'the worker');

  await s3.stop();
  try {
    const down = await fetch(url);
    expect([down.status, down.headers.get('retry-after')]).toEqual([503, '5']);
    // A run during the outage: its writes are tried again until the store answers.
    const during = await client.createRun({ testId, evidence: { trace: 'on', video: 'off', screenshots: 'on' } });
    const retried = () => worker.output().includes('artifact store call failed; trying again');
    // Until the worker says it tries again, or the run has ended without doing so (a failure here).
    await waitUntil(async () => {
      const { status } = await db.run.findUniqueOrThrow({ where: { id: during }, select: { status: true } });
      return retried() || (status !== 'queued' && status !== 'running');
    });
    expect(retried()).toBe(true);
    await s3.restart();
    const run = await client.waitRun(during);
    expect(run.status).toBe('failed');
    const kept = await db.artifact.findMany({ where: { runId: during } });
    expect(new Set(kept.map((a) => a.kind))).toEqual(new Set(['screenshot', 'trace']));
    for (const a of kept) expect((await bucket.get(a.storageKey))?.length).toBe(a.sizeBytes);
  } finally {
    await s3.restart().catch(() => undefined);
  }
  const back = await fetch(url);
  expect(back.status).toBe(200);
  expect(Buffer.from(await back.arrayBuffer()).length).toBe(shot.sizeBytes);
});
