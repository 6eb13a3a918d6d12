import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { createTenant, testDb } from '../support/harness';
import { demoProjectFile, PROTECTED_CREDENTIALS, startFixtureSite, type FixtureSite } from '../fixtures/site';
import type { SuiteRun } from '@testrun/contracts';
import { present } from '../support/present';
import { apiClient, memoryLogger, startApi, waitUntil, zipEntries, zipEntryText } from './support';

/**
 * End to end over HTTP: the API (in this process) records runs, the worker (in this process, real
 * Chromium) executes them against the fixture site, and the outcomes come back through the API.
 * Over 300 lines on purpose: one case per outcome, all sharing one API, worker and browser.
 */
jest.setTimeout(90_000);

const BASIC = `Basic ${Buffer.from(`${PROTECTED_CREDENTIALS.username}:${PROTECTED_CREDENTIALS.password}`).toString('base64')}`;
const BYPASS = 'bypass-token-4f9c2e7a1d';

let db: Db;
let site: FixtureSite;
let preview: FixtureSite;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: WorkerService;
let workerLog: () => string;
let client: ReturnType<typeof apiClient>;
let workspaceId: string;

beforeAll(async () => {
  db = testDb();
  [site, preview] = await Promise.all([startFixtureSite(), startFixtureSite({ variant: 'preview' })]);
  api = await startApi();
  const mem = memoryLogger('worker');
  workerLog = mem.text;
  worker = await startWorkerService(readWorkerConfig({ ...process.env, WORKER_CONCURRENCY: '2' }), {
    logger: mem.logger,
    reconcile: false,
  });
  const tenant = await createTenant(db);
  workspaceId = tenant.workspace.id;
  client = apiClient(api.url, tenant.key);
  await applyProject(db, workspaceId, demoProjectFile(site.url));
  await applyProject(db, workspaceId, {
    slug: 'secrets',
    name: 'Headers',
    baseUrl: site.url,
    suites: [
      {
        slug: 'headers',
        name: 'Headers',
        tests: [
          {
            key: 'protected',
            name: 'Protected page',
            steps: [
              { action: 'goto', url: '/protected' },
              { action: 'expectText', selector: 'h1', text: 'Protected preview' },
            ],
          },
          {
            key: 'third-party',
            name: 'Third-party page',
            steps: [
              { action: 'goto', url: '/third-party' },
              { action: 'expectText', selector: '#status', text: 'All third-party requests done' },
            ],
          },
        ],
      },
      {
        slug: 'preview',
        name: 'Preview',
        tests: [
          {
            key: 'preview-heading',
            name: 'Preview heading',
            steps: [
              { action: 'goto', url: '/' },
              { action: 'expectText', selector: 'h1', text: 'Testrun Shop (preview)', timeoutMs: 1_000 },
            ],
          },
        ],
      },
    ],
  });
});

afterAll(async () => {
  await worker.stop();
  await api.close();
  await Promise.all([site.close(), preview.close()]);
  await db.$disconnect();
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** Directories of {@link storedFile}'s copies, removed after all. */
const copies: string[] = [];

/** A stored artifact copied to a file of its own, for unzip to read. */
async function storedFile(storageKey: string): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'artifact-'));
  copies.push(dir);
  const file = path.join(dir, path.basename(storageKey));
  writeFileSync(file, present(await worker.store.get(storageKey), `stored ${storageKey}`));
  return file;
}

async function outcomeOf(runId: string) {
  return db.run.findUniqueOrThrow({
    where: { id: runId },
    select: {
      status: true,
      outcomeCode: true,
      outcomeStep: true,
      resultSummary: true,
      attempt: true,
      headersSealed: true,
    },
  });
}

describe('the demo suite', () => {
  let suiteRun: SuiteRun;
  const byName = (name: string) =>
    present(
      suiteRun.tests.find((t) => t.name === name),
      `test "${name}" in the suite run`,
    );

  beforeAll(async () => {
    // Everything kept, passing runs included: the cases below read the recordings of a passing run.
    const evidence = { trace: 'on', video: 'on', screenshots: 'on' } as const;
    suiteRun = await client.waitSuiteRun(
      await client.createSuiteRun({ projectSlug: 'demo-shop', suiteSlug: 'smoke', evidence }),
    );
  });

  it('ends with exactly the statuses, counters and aggregate status its tests call for', () => {
    expect(suiteRun.tests.map((t) => [t.name, t.status])).toEqual([
      ['Order form places an order', 'passed'],
      ['Heading says Welcome (fails: it does not)', 'failed'],
      ['Sign in button (fails: not on the page)', 'failed'],
      ['Broken page (fails: HTTP 500)', 'failed'],
      ['Disabled test (skipped)', 'skipped'],
      ['Unreachable target (error)', 'error'],
      ['Slow page beyond the time budget (error: timeout)', 'error'],
    ]);
    expect(suiteRun).toMatchObject({
      status: 'failed',
      total_count: 7,
      passed_count: 1,
      failed_count: 3,
      error_count: 2,
      skipped_count: 1,
    });
    expect(byName('Disabled test (skipped)').skipReason).toBe('test_disabled');
  });

  it('times every run and the suite run from what the worker recorded, never from a client clock', async () => {
    const ms = (iso: string | null) => (iso === null ? Number.NaN : Date.parse(iso));
    const finished = suiteRun.tests.filter((t) => t.status !== 'skipped');
    for (const entry of finished) {
      const run = await client.getRun(entry.runId);
      expect(run).toMatchObject({ test_name: entry.name, attempts: 1 });
      // created ≤ started ≤ finished; the duration is the worker's own, within the start–finish span.
      expect(ms(run.created_at)).toBeLessThanOrEqual(ms(run.started_at));
      expect(ms(run.started_at)).toBeLessThanOrEqual(ms(run.finished_at));
      const span = ms(run.finished_at) - ms(run.started_at);
      expect(run.duration_ms).toBeGreaterThan(0);
      expect(run.duration_ms).toBeLessThanOrEqual(span + 1);
      expect(entry.durationMs).toBe(run.duration_ms);
    }
    const skipped = await client.getRun(byName('Disabled test (skipped)').runId);
    expect(skipped).toMatchObject({ started_at: null, duration_ms: null, attempts: 0 });
    expect(byName('Disabled test (skipped)').durationMs).toBeNull();
    const runs = await Promise.all(finished.map((t) => client.getRun(t.runId)));
    // The suite run spans its runs: from the first start to the last finish.
    expect(ms(suiteRun.started_at)).toBeLessThanOrEqual(Math.min(...runs.map((r) => ms(r.started_at))));
    expect(ms(suiteRun.finished_at)).toBe(Math.max(...runs.map((r) => ms(r.finished_at))));
    expect(suiteRun.duration_ms).toBe(ms(suiteRun.finished_at) - ms(suiteRun.started_at));
  });

  it('gives every run a one-sentence summary naming the step and the reason, and the exact code', async () => {
    const run = async (name: string) => ({
      api: await client.getRun(byName(name).runId),
      db: await outcomeOf(byName(name).runId),
    });

    const passed = await run('Order form places an order');
    expect(passed.api.result_summary).toMatch(/^Passed: 11 steps in [\d.]+ m?s\.$/);
    expect(passed.api.error).toBeNull();

    const heading = await run('Heading says Welcome (fails: it does not)');
    expect(heading.api.result_summary).toBe(
      'Failed at step 2 (expectText "h1"): expected text of "h1" to contain "Welcome to the shop" but it was "Testrun Shop"',
    );
    expect(heading.api.error).toBeNull();
    expect(heading.db).toMatchObject({ outcomeCode: 'expectation_failed', outcomeStep: 2 });

    const missing = await run('Sign in button (fails: not on the page)');
    expect(missing.api.result_summary).toBe('Failed at step 2 (click "text=Sign in"): element not found within 1 s');
    expect(missing.db).toMatchObject({ outcomeCode: 'element_not_found', outcomeStep: 2 });

    const broken = await run('Broken page (fails: HTTP 500)');
    expect(broken.api.result_summary).toBe(
      `Failed at step 1 (goto "/broken"): GET ${site.url}/broken answered HTTP 500`,
    );
    expect(broken.db).toMatchObject({ outcomeCode: 'http_error', outcomeStep: 1 });

    const unreachable = await run('Unreachable target (error)');
    expect(unreachable.api.result_summary).toMatch(
      /^Error at step 1 \(goto "http:\/\/127\.0\.0\.1:2\/"\): target unreachable \(connection refused/,
    );
    expect(unreachable.api.error).toMatchObject({ code: 'target_unreachable', step: 1 });

    const slow = await run('Slow page beyond the time budget (error: timeout)');
    expect(slow.api.result_summary).toBe('Error at step 1 (goto "/slow"): time budget of 1 s exceeded');
    expect(slow.api.error).toMatchObject({ code: 'timeout', step: 1 });

    const skipped = await client.getRun(byName('Disabled test (skipped)').runId);
    expect(skipped).toMatchObject({ status: 'skipped', skip_reason: 'test_disabled', error: null });
  });

  it('records every step, readable screenshots, a trace and a video of a finished run', async () => {
    const runId = byName('Order form places an order').runId;
    const steps = await db.stepResult.findMany({ where: { runId }, orderBy: { index: 'asc' } });
    expect(steps.map((s) => [s.index, s.action, s.outcome, s.attempt])).toEqual(
      [
        'goto',
        'expectTitle',
        'expectText',
        'fill',
        'select',
        'check',
        'click',
        'expectText',
        'screenshot',
        'click',
        'expectUrl',
      ].map((a, i) => [i + 1, a, 'passed', 1]),
    );
    expect(steps[6]?.label).toBe('click "text=Place order"');
    expect(steps[0]?.target).toBe(`${site.url}/`);

    const artifacts = await db.artifact.findMany({ where: { runId } });
    const screenshots = artifacts.filter((a) => a.kind === 'screenshot');
    expect(screenshots.map((a) => a.stepIndex).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
    ]);
    for (const step of steps) expect(screenshots.map((s) => s.id)).toContain(step.screenshotId);
    for (const shot of screenshots) {
      const body = present(await worker.store.get(shot.storageKey), `screenshot ${shot.name}`);
      expect(body.length).toBe(shot.sizeBytes);
      const isPng = body.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      const isJpeg = body[0] === 0xff && body[1] === 0xd8;
      expect(shot.contentType === 'image/png' ? isPng : isJpeg).toBe(true);
    }
    // The screenshot step's own picture is the full PNG it asked for, under its name.
    expect(screenshots.find((s) => s.stepIndex === 9)).toMatchObject({
      contentType: 'image/png',
      name: 'order-placed.png',
    });

    const trace = present(
      artifacts.find((a) => a.kind === 'trace'),
      'the trace artifact',
    );
    expect(trace).toMatchObject({ name: 'trace.zip', contentType: 'application/zip' });
    const traceFile = await storedFile(trace.storageKey);
    expect(zipEntries(traceFile)).toEqual(expect.arrayContaining(['trace.trace', 'trace.network']));
    const events = zipEntryText(traceFile, 'trace.trace')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type?: string; method?: string; apiName?: string });
    expect(events.some((e) => e.type === 'before' && /goto/i.test(e.method ?? e.apiName ?? ''))).toBe(true);

    if (worker.recordVideo) {
      const video = present(
        artifacts.find((a) => a.kind === 'video'),
        'the video artifact',
      );
      const body = present(await worker.store.get(video.storageKey), 'the stored video');
      expect(body.subarray(0, 4).equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]))).toBe(true);
    }
  });

  it('stops at the first step that does not pass and lists the rest as skipped', async () => {
    const runId = byName('Slow page beyond the time budget (error: timeout)').runId;
    const steps = await db.stepResult.findMany({ where: { runId }, orderBy: { index: 'asc' } });
    expect(steps.map((s) => [s.index, s.outcome])).toEqual([
      [1, 'error'],
      [2, 'skipped'],
    ]);
    expect(steps[0]?.error).toMatch(/time budget/);
  });
});

describe('request headers', () => {
  it('reach the target origin only, open the protected page, and never reach a trace, the database or a log', async () => {
    const suiteRunId = await client.createSuiteRun({
      projectSlug: 'secrets',
      suiteSlug: 'headers',
      headers: { Authorization: BASIC, 'X-Bypass-Token': BYPASS },
      // The traces of these passing runs are read below.
      evidence: { trace: 'on' },
    });
    const suiteRun = await client.waitSuiteRun(suiteRunId);
    expect(suiteRun.tests.map((t) => t.status)).toEqual(['passed', 'passed']);

    const protectedHits = site.received.filter((r) => r.path === '/protected');
    expect(protectedHits.at(-1)?.headers).toMatchObject({ authorization: BASIC, 'x-bypass-token': BYPASS });
    expect(site.received.filter((r) => r.path === '/third-party').at(-1)?.headers['x-bypass-token']).toBe(BYPASS);
    // The second origin got the page's image, script and fetch, and none of the headers.
    expect(site.thirdParty.received.length).toBeGreaterThanOrEqual(3);
    for (const r of site.thirdParty.received) {
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers['x-bypass-token']).toBeUndefined();
    }

    for (const t of suiteRun.tests) {
      expect((await outcomeOf(t.runId)).headersSealed).toBeNull();
      const trace = await db.artifact.findFirstOrThrow({ where: { runId: t.runId, kind: 'trace' } });
      const file = await storedFile(trace.storageKey);
      for (const entry of zipEntries(file).filter((e) => !e.endsWith('/'))) {
        const text = zipEntryText(file, entry);
        expect(text).not.toContain(BYPASS);
        expect(text).not.toContain(BASIC.slice(6));
      }
    }
    expect(workerLog()).not.toContain(BYPASS);
    expect(workerLog()).not.toContain(BASIC.slice(6));
  });

  it('are required by the protected page: without them it fails with HTTP 401', async () => {
    const suiteRun = await client.waitSuiteRun(
      await client.createSuiteRun({ projectSlug: 'secrets', suiteSlug: 'headers' }),
    );
    const run = await client.getRun(present(suiteRun.tests[0], 'the first test').runId);
    expect(run).toMatchObject({ status: 'failed', error: null });
    expect(run.result_summary).toBe(
      `Failed at step 1 (goto "/protected"): GET ${site.url}/protected answered HTTP 401`,
    );
  });
});

describe('baseUrl override', () => {
  it('sends the run to another fixture port', async () => {
    const before = preview.received.length;
    const suiteRunId = await client.createSuiteRun({
      projectSlug: 'secrets',
      suiteSlug: 'preview',
      baseUrl: preview.url,
    });
    const suiteRun = await client.waitSuiteRun(suiteRunId);
    expect(suiteRun.tests[0]?.status).toBe('passed');
    expect(preview.received.length).toBeGreaterThan(before);

    // The same test against the project's own target fails: its heading has no "(preview)".
    const plain = await client.createSuiteRun({ projectSlug: 'secrets', suiteSlug: 'preview' });
    const plainRun = await client.waitSuiteRun(plain);
    expect(plainRun.tests[0]?.status).toBe('failed');
  });
});

describe('one warm browser', () => {
  it('launched Chromium once for every run of this file', () => {
    expect(worker.browser.launchCount).toBe(1);
    expect(existsSync(present(process.env.ARTIFACTS_DIR, 'ARTIFACTS_DIR'))).toBe(true);
  });
});

describe('a browser that dies mid-run', () => {
  it('ends that run error/browser_crashed, and the next run gets a relaunched browser', async () => {
    const applied = await applyProject(db, workspaceId, {
      slug: 'crash',
      name: 'Crash',
      baseUrl: site.url,
      suites: [
        {
          slug: 'crash',
          name: 'Crash',
          tests: [
            {
              key: 'long',
              name: 'Long wait',
              steps: [
                { action: 'goto', url: '/' },
                { action: 'wait', ms: 10_000 },
                { action: 'expectText', selector: 'h1', text: 'Testrun Shop' },
              ],
            },
            {
              key: 'after',
              name: 'After the crash',
              steps: [
                { action: 'goto', url: '/' },
                { action: 'expectText', selector: 'h1', text: 'Testrun Shop' },
              ],
            },
          ],
        },
      ],
    });
    const [long, after] = present(applied.suites[0], 'the crash suite').tests;
    const launchesBefore = worker.browser.launchCount;
    const runId = await client.createRun({ testId: present(long, 'the long test').id });
    // Once the first step is recorded the browser is inside the long wait.
    await waitUntil(async () => (await db.stepResult.count({ where: { runId } })) > 0);
    // Chromium is a child of this process (the worker runs in it); kill it as an OOM killer would.
    const { execFileSync } = await import('node:child_process');
    const children = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => /chrom/i.test(l))
      .map((l) => Number(l.trim().split(/\s+/)[0]));
    expect(children.length).toBeGreaterThan(0);
    for (const pid of children) process.kill(pid, 'SIGKILL');

    const crashed = await client.waitRun(runId);
    expect(crashed).toMatchObject({ status: 'error', error: { code: 'browser_crashed', step: 2 } });
    expect(crashed.result_summary).toMatch(/^Error at step 2 \(wait/);

    const next = await client.createRun({ testId: present(after, 'the test after the crash').id });
    expect((await client.waitRun(next)).status).toBe('passed');
    expect(worker.browser.launchCount).toBe(launchesBefore + 1);
  });
});
