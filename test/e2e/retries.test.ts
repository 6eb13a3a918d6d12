import { parseAlternateLink } from '@testrun/client';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { createTenant, testDb } from '../support/harness';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { present } from '../support/present';
import { apiClient, memoryLogger, startApi } from './support';

/**
 * Retries end to end over HTTP: the real worker runs tests against the fixture site, whose `/flaky`
 * page fails its first request and then works; every attempt keeps its own steps and evidence.
 */
jest.setTimeout(90_000);

let db: Db;
let site: FixtureSite;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: WorkerService;
let client: ReturnType<typeof apiClient>;
let workspaceId: string;
let key: string;

beforeAll(async () => {
  db = testDb();
  site = await startFixtureSite();
  api = await startApi();
  worker = await startWorkerService(readWorkerConfig({ ...process.env, WORKER_CONCURRENCY: '2' }), {
    logger: memoryLogger('worker').logger,
    reconcile: false,
  });
  const tenant = await createTenant(db);
  workspaceId = tenant.workspace.id;
  key = tenant.key;
  client = apiClient(api.url, tenant.key);
  await applyProject(db, workspaceId, {
    slug: 'retries',
    name: 'Retries',
    baseUrl: site.url,
    suites: [
      {
        slug: 'mixed',
        name: 'Mixed',
        tests: [
          {
            key: 'flaky',
            name: 'Flaky page',
            retries: 2,
            steps: [
              { action: 'goto', url: `/flaky?key=${workspaceId}&fails=1` },
              { action: 'expectText', selector: 'h1', text: 'Ready', timeoutMs: 500 },
            ],
          },
          {
            key: 'broken',
            name: 'Always wrong',
            retries: 1,
            steps: [
              { action: 'goto', url: '/' },
              { action: 'expectText', selector: 'h1', text: 'Welcome to the shop', timeoutMs: 500 },
            ],
          },
          { key: 'fine', name: 'Fine', steps: [{ action: 'goto', url: '/about' }] },
        ],
      },
    ],
  });
});

afterAll(async () => {
  await worker.stop();
  await api.close();
  await site.close();
  await db.$disconnect();
});

/** The executions a run's steps and artifacts were kept under, with their counts. */
async function evidenceOf(runId: string) {
  const steps = await db.stepResult.groupBy({
    by: ['attempt'],
    where: { runId },
    _count: true,
    orderBy: { attempt: 'asc' },
  });
  const shots = await db.artifact.groupBy({
    by: ['attempt'],
    where: { runId, kind: 'screenshot' },
    _count: true,
    orderBy: { attempt: 'asc' },
  });
  return { steps: steps.map((s) => [s.attempt, s._count]), shots: shots.map((s) => [s.attempt, s._count]) };
}

describe('a suite with retries', () => {
  it('ends a test that failed once and then passed passed and flaky, with both attempts kept', async () => {
    const suiteRun = await client.waitSuiteRun(
      await client.createSuiteRun({
        projectSlug: 'retries',
        suiteSlug: 'mixed',
        evidence: { screenshots: 'on', trace: 'off', video: 'off' },
      }),
    );
    expect(suiteRun).toMatchObject({ status: 'failed', passed_count: 2, failed_count: 1, flaky_count: 1 });
    expect(suiteRun.tests.map((t) => [t.name, t.status, t.flaky, t.attempts])).toEqual([
      ['Flaky page', 'passed', true, 2],
      ['Always wrong', 'failed', false, 2],
      ['Fine', 'passed', false, 1],
    ]);

    const flakyEntry = present(suiteRun.tests[0], 'the flaky test');
    const flaky = await client.getRun(flakyEntry.runId);
    expect(flaky).toMatchObject({ status: 'passed', flaky: true, attempts: 2, retries: 2, error: null });
    expect(flaky.result_summary).toMatch(
      /^Passed on retry 1 of 2; the first attempt failed at step 2 \(expectText "h1"\): .*"Not yet"\. Passed: 2 steps in /,
    );
    expect(flaky.previous_attempts).toEqual([expect.objectContaining({ attempt: 1, status: 'failed', error: null })]);
    const [first] = flaky.previous_attempts;
    expect(first?.result_summary).toMatch(/^Failed at step 2 \(expectText "h1"\)/);
    // Each attempt's steps and screenshots are its own: two steps and two screenshots each.
    expect(await evidenceOf(flaky.id)).toEqual({
      steps: [
        [1, 2],
        [2, 2],
      ],
      shots: [
        [1, 2],
        [2, 2],
      ],
    });
    const requests = site.received.filter((r) => r.path.startsWith(`/flaky?key=${workspaceId}`));
    expect(requests).toHaveLength(2);

    // The run's page shows both attempts, each with its own screenshots, and marks the run flaky.
    const page = await viewPage(flaky.id);
    expect(page).toContain('<span class="chip chip-flaky" data-flaky-mark>flaky</span>');
    expect(page).toContain('Retry #1');
    expect(page).toMatch(/>Run <span class="chip chip-failed"/);
    const shots = await db.artifact.findMany({ where: { runId: flaky.id, kind: 'screenshot' }, select: { id: true } });
    for (const shot of shots) expect(page).toContain(`/artifacts/${shot.id}`);
  });

  it('ends a test that fails every attempt failed after retries + 1 attempts', async () => {
    const runId = await client.createRun({ testId: await testId('broken') });
    const run = await client.waitRun(runId);
    expect(run).toMatchObject({ status: 'failed', flaky: false, attempts: 2, retries: 1 });
    expect(run.result_summary).toMatch(/^Failed at step 2 \(expectText "h1"\)/);
    expect(run.previous_attempts.map((a) => [a.attempt, a.status])).toEqual([[1, 'failed']]);
    const [first] = run.previous_attempts;
    // Attempts follow each other: the second starts when the first ended.
    expect(Date.parse(present(first, 'the first attempt').finished_at)).toBeLessThanOrEqual(
      Date.parse(run.finished_at ?? ''),
    );
    expect((await evidenceOf(runId)).steps).toEqual([
      [1, 2],
      [2, 2],
    ]);
  });

  it("takes the request's retries over the test's", async () => {
    const runId = await client.createRun({ testId: await testId('broken'), retries: 0 });
    const run = await client.waitRun(runId);
    expect(run).toMatchObject({ status: 'failed', attempts: 1, retries: 0, previous_attempts: [] });

    const more = await client.waitRun(await client.createRun({ testId: await testId('broken'), retries: 3 }));
    expect(more).toMatchObject({ status: 'failed', attempts: 4, retries: 3 });
    expect(more.previous_attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
  });
});

/** The HTML of a run's page in the view, through the link the API gives with the run. */
async function viewPage(runId: string): Promise<string> {
  const res = await fetch(`${api.url}/api/v1/runs/${runId}`, { headers: { authorization: `Bearer ${key}` } });
  const link = present(parseAlternateLink(res.headers.get('link')), 'the view link of the run');
  // The link names the deployment's public address; the API under test listens elsewhere.
  const { pathname, search } = new URL(link);
  return (await fetch(`${api.url}${pathname}${search}`)).text();
}

async function testId(key: string): Promise<string> {
  const test = await db.test.findFirstOrThrow({ where: { workspaceId, key }, select: { id: true } });
  return test.id;
}
