import { existsSync } from 'node:fs';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import type { EvidenceSettings, Step } from '@testrun/contracts';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { HOSTILE_FILE_BYTES } from '../fixtures/hostile-pages';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { createTenant, testDb } from '../support/harness';
import { present } from '../support/present';
import { apiClient, memoryLogger, startApi } from './support';

/**
 * Pages that attack the browser running them end their own run with a clear code, within its time
 * budget, and leave the worker and its browser fit for the next run.
 */
jest.setTimeout(120_000);

let db: Db;
let site: FixtureSite;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: WorkerService | null = null;
let client: ReturnType<typeof apiClient>;
let workspaceId: string;

const PLAIN: Step[] = [
  { action: 'goto', url: '/about' },
  { action: 'expectText', selector: 'h1', text: 'About Testrun Shop' },
];

/** A test that opens `page`, then gives it time to misbehave before checking it. */
function hostile(key: string, page: string) {
  return {
    key,
    name: key,
    timeoutMs: 30_000,
    steps: [
      { action: 'goto', url: page },
      { action: 'wait', ms: 5_000 },
      { action: 'expectText', selector: 'h1', text: 'still here' },
    ] satisfies Step[],
  };
}

async function startWorker(limits: Partial<ReturnType<typeof readWorkerConfig>['limits']> = {}) {
  const config = readWorkerConfig({
    ...process.env,
    WORKER_CONCURRENCY: '1',
    WORKER_PAGE_HEAP_MB: '64',
    WORKER_MAX_PAGES: '10',
    WORKER_MAX_DIALOGS: '20',
  });
  worker = await startWorkerService(
    { ...config, limits: { ...config.limits, ...limits } },
    { logger: memoryLogger('worker').logger, reconcile: false },
  );
  return worker;
}

beforeAll(async () => {
  db = testDb();
  site = await startFixtureSite();
  api = await startApi();
  const tenant = await createTenant(db);
  client = apiClient(api.url, tenant.key);
  workspaceId = tenant.workspace.id;
  await applyProject(db, workspaceId, {
    slug: 'hostile',
    name: 'Hostile pages',
    baseUrl: site.url,
    suites: [
      {
        slug: 'hostile',
        name: 'Hostile pages',
        tests: [
          hostile('memory', '/hostile/memory'),
          hostile('popups', '/hostile/popups'),
          hostile('popup-burst', '/hostile/popup-burst'),
          hostile('alerts', '/hostile/alerts'),
          {
            key: 'download',
            name: 'download',
            steps: [
              { action: 'goto', url: '/hostile/download' },
              { action: 'click', selector: '#get' },
              { action: 'wait', ms: 1_000 },
              { action: 'expectText', selector: 'h1', text: 'Download' },
            ],
          },
          { key: 'plain', name: 'plain', steps: PLAIN },
        ],
      },
    ],
  });
});

afterAll(async () => {
  await worker?.stop();
  await api.close();
  await site.close();
  await db.$disconnect();
});

async function runTest(key: string, evidence?: EvidenceSettings) {
  const test = await db.test.findFirstOrThrow({ where: { workspaceId, key }, select: { id: true } });
  const runId = await client.createRun({ testId: test.id, ...(evidence ? { evidence } : {}) });
  return client.waitRun(runId);
}

describe('with one worker slot', () => {
  beforeAll(async () => {
    await startWorker();
  });
  afterAll(async () => {
    await worker?.stop();
    worker = null;
  });

  it.each([
    ['memory', /^Error at step \d \(.*\): resource limit reached \(the page used more than 64 MB of JavaScript memory/],
    ['popups', /^Error at step \d \(.*\): resource limit reached \(the page opened more than 9 popups or windows\)/],
    // Popups of a page that has not answered yet: counted as the browser opens them, not once loaded.
    [
      'popup-burst',
      /^Error at step \d \(.*\): resource limit reached \(the page opened more than 9 popups or windows\)/,
    ],
    ['alerts', /^Error at step \d \(.*\): resource limit reached \(the page raised more than 20 dialogs\)/],
  ])('a page that goes past the %s limit ends its run resource_limit; the next run passes', async (key, summary) => {
    const run = await runTest(key);
    expect([run.status, run.error?.code, run.result_summary]).toEqual([
      'error',
      'resource_limit',
      expect.stringMatching(summary),
    ]);
    const steps = await db.stepResult.findMany({ where: { runId: run.id }, orderBy: { index: 'asc' } });
    expect(steps.some((s) => s.outcome === 'error' && s.error?.startsWith('the page '))).toBe(true);

    const next = await runTest('plain');
    expect(next.status).toBe('passed');
  });

  it('a page that downloads a huge file stores nothing: downloads are refused, the run goes on', async () => {
    const run = await runTest('download');
    // The summary is in the message when the status is not the one expected.
    expect(`${run.status}: ${run.result_summary}`).toMatch(/^passed: Passed: 4 steps/);
    expect(site.downloads.length).toBeGreaterThan(0);
    for (const download of site.downloads) {
      expect(download.complete).toBe(false);
      expect(download.sentBytes).toBeLessThan(HOSTILE_FILE_BYTES);
    }
    const artifacts = await db.artifact.findMany({ where: { runId: run.id } });
    expect(artifacts.every((a) => a.name !== 'huge.bin')).toBe(true);
  });
});

describe('with a recording cap smaller than any trace', () => {
  beforeAll(async () => {
    await startWorker({ maxRecordingBytes: 1024 });
  });

  it('keeps the run, leaves the trace out and says so in the summary', async () => {
    // A passing run keeps its trace and screenshots only when asked to.
    const run = await runTest('plain', { trace: 'on', screenshots: 'on' });
    expect(run.status).toBe('passed');
    expect(run.result_summary).toMatch(
      /^Passed: 2 steps in .*\. The trace was not kept: \d+ KB is over the 1 KB cap\./,
    );
    const kinds = (await db.artifact.findMany({ where: { runId: run.id } })).map((a) => a.kind);
    expect(kinds).not.toContain('trace');
    expect(kinds).toContain('screenshot');
  });

  it('removes its scratch directory when it stops', async () => {
    const service = present(worker, 'the worker');
    const dir = service.scratchDir;
    expect(existsSync(dir)).toBe(true);
    await service.stop();
    expect(existsSync(dir)).toBe(false);
  });
});
