import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAlternateLink } from '@testrun/client';
import type { Run } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import { addRunJobs, createRedis, createRunQueue } from '@testrun/core/queue';
import { applyProject, createApiKey } from '../../packages/admin/src/operations';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { createTenant, insertSuiteRuns, testDb } from '../support/harness';
import { present } from '../support/present';
import { apiClient, memoryLogger, startApi } from './support';

/**
 * Visual comparison of step tests (docs/VISUAL.md, "Step tests") through the real API, worker,
 * Postgres, Redis and Chromium: a first run keeps its screenshots as baselines awaiting approval and
 * passes; a run of the same page passes against them; a changed page fails `screenshot_changed`
 * with the baseline, the image taken and the diff kept and shown on the run's page; the approval
 * route makes the change the baseline, and the next run passes. A run of no deployment has no
 * baselines to compare with: its step ends `invalid_definition`, saying why.
 */
jest.setTimeout(120_000);

/**
 * The page under test: a banner that never changes and a clock that always does, in the viewport,
 * and below it a hero in `?shade=`. The changed image is the hero's alone, a small one: compared
 * under jest, Playwright's comparator takes seconds to encode a diff of a whole viewport.
 */
function pageOf(shade: string): string {
  return `<!doctype html><html><head><title>Visual</title><style>
  body{margin:0;font-family:sans-serif} #banner{height:60px;background:#234}
  #hero{margin-top:900px;width:320px;height:120px;background:${shade}}
  </style></head><body><div id="banner"></div><p id="clock">${new Date().toISOString()}</p><div id="hero"></div></body></html>`;
}

let db: Db;
let site: Server;
let siteUrl: string;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: WorkerService;
let client: ReturnType<typeof apiClient>;
let deployKey: string;
let workspaceId: string;
let testId: string;
let legacySuiteId: string;

beforeAll(async () => {
  db = testDb();
  site = createServer((req, res) => {
    const shade = new URL(req.url ?? '/', 'http://x').searchParams.get('shade') ?? 'teal';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pageOf(shade.replace(/[^a-z]/g, '')));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  api = await startApi();
  worker = await startWorkerService(readWorkerConfig({ ...process.env, WORKER_CONCURRENCY: '1' }), {
    logger: memoryLogger('worker').logger,
    reconcile: false,
  });
  const tenant = await createTenant(db);
  workspaceId = tenant.workspace.id;
  client = apiClient(api.url, tenant.key);
  deployKey = (await createApiKey(db, { workspaceId, creatorEmail: tenant.email, name: 'deploy', scopes: ['deploy'] }))
    .key;
  const applied = await applyProject(db, workspaceId, {
    slug: 'visual',
    name: 'Visual',
    baseUrl: siteUrl,
    suites: [
      {
        slug: 'pages',
        tests: [
          {
            key: 'home',
            name: 'Home looks right',
            steps: [
              { action: 'goto', url: '/?shade={{vars.SHADE}}' },
              { action: 'expectScreenshot', name: 'page', mask: ['#clock'] },
              { action: 'expectScreenshot', name: 'hero', selector: '#hero' },
            ],
          },
        ],
      },
      {
        slug: 'legacy',
        tests: [
          {
            key: 'old',
            name: 'Old run',
            steps: [
              { action: 'goto', url: '/' },
              { action: 'expectScreenshot', name: 'page' },
            ],
          },
        ],
      },
    ],
  });
  testId = present(applied.suites[0]?.tests[0], 'the test').id;
  legacySuiteId = present(applied.suites[1], 'the legacy suite').id;
});

afterAll(async () => {
  await worker.stop();
  await api.close();
  await new Promise((resolve) => site.close(resolve));
  await db.$disconnect();
});

/** A run of the test with the hero in `shade`, once it has ended, and its outcome code. */
async function runIn(shade: string): Promise<{ run: Run; code: string | null }> {
  const run = await client.waitRun(await client.createRun({ testId, variables: { SHADE: shade } }));
  const row = await db.run.findUniqueOrThrow({ where: { id: run.id }, select: { outcomeCode: true } });
  return { run, code: row.outcomeCode };
}

let changed: Run;

it('passes a first run, its screenshots kept as baselines awaiting approval', async () => {
  const { run } = await runIn('teal');
  expect([run.status, run.result_summary]).toEqual([
    'passed',
    'Passed; new baselines awaiting approval: page.png, hero.png',
  ]);
  expect(run.visual_changes?.map((c) => [c.name, c.path, c.kind, c.approved])).toEqual([
    ['hero.png', '/steps/pages/home/hero.png', 'new', false],
    ['page.png', '/steps/pages/home/page.png', 'new', false],
  ]);
  const baselines = await db.baseline.findMany({ where: { workspaceId }, orderBy: { path: 'asc' } });
  expect(baselines.map((b) => [b.path, b.status, b.runId])).toEqual([
    ['/steps/pages/home/hero.png', 'new', run.id],
    ['/steps/pages/home/page.png', 'new', run.id],
  ]);
});

it('compares a second run of the same page against them and passes, finding nothing', async () => {
  const { run } = await runIn('teal');
  expect(run.status).toBe('passed');
  expect(run.result_summary).toMatch(/^Passed: 3 steps in /);
  expect(run.visual_changes).toBeUndefined();
});

it('fails a changed page screenshot_changed, keeping and showing the baseline, the image taken and the diff', async () => {
  const failed = await runIn('crimson');
  changed = failed.run;
  expect([changed.status, failed.code]).toEqual(['failed', 'screenshot_changed']);
  expect(changed.result_summary).toMatch(
    /^Screenshot changed at step 3 \(expectScreenshot "hero" of "#hero"\): hero\.png differs from its baseline: 38400 pixels \(ratio 1\.00 of all image pixels\) are different$/,
  );
  expect(changed.visual_changes?.map((c) => [c.name, c.kind, c.approved])).toEqual([['hero.png', 'changed', false]]);
  const images = await db.artifact.findMany({
    where: { runId: changed.id, kind: 'attachment' },
    orderBy: { name: 'asc' },
  });
  expect(images.map((a) => [a.name, a.contentType])).toEqual([
    ['hero-actual.png', 'image/png'],
    ['hero-diff.png', 'image/png'],
    ['hero-expected.png', 'image/png'],
  ]);
  // The run's page shows them as it shows a Playwright run's, each served as the image it is.
  const got = await fetch(`${api.url}/api/v1/runs/${changed.id}`, {
    headers: { authorization: `Bearer ${deployKey}` },
  });
  const link = new URL(present(parseAlternateLink(got.headers.get('link')), 'the view link'));
  const view = new URL(`${link.pathname}${link.search}`, api.url);
  const html = await (await fetch(view)).text();
  for (const [role, caption] of [
    ['expected', 'Expected (the baseline)'],
    ['actual', 'Actual'],
    ['diff', 'Diff'],
  ] as const) {
    const image = present(
      images.find((a) => a.name === `hero-${role}.png`),
      role,
    );
    expect(html).toContain(`<figure class="visual-image visual-${role}">`);
    expect(html).toContain(`alt="hero.png: ${caption}"`);
    const served = await fetch(new URL(`${view.pathname}/artifacts/${image.id}${view.search}`, api.url));
    expect([served.status, served.headers.get('content-type')]).toEqual([200, 'image/png']);
  }
  expect(html).toContain(`testrun approve --run ${changed.id}`);
});

it('approves the change through the API: it is the baseline, and the next run of the changed page passes', async () => {
  const res = await fetch(`${api.url}/api/v1/runs/${changed.id}/visual-changes/approve`, {
    method: 'POST',
    headers: { authorization: `Bearer ${deployKey}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const body = (await res.json()) as { approved: Array<{ name: string; approved: boolean }> };
  expect([res.status, body.approved.map((c) => [c.name, c.approved])]).toEqual([200, [['hero.png', true]]]);
  const page = await db.baseline.findFirstOrThrow({ where: { workspaceId, path: '/steps/pages/home/hero.png' } });
  expect([page.status, page.runId]).toEqual(['approved', changed.id]);
  const { run } = await runIn('crimson');
  expect([run.status, run.visual_changes]).toEqual(['passed', undefined]);
});

it('ends a run of no deployment invalid_definition, naming why, before anything is kept', async () => {
  const { runIds } = await insertSuiteRuns(db, workspaceId, legacySuiteId, { baseUrl: siteUrl, suiteRun: false });
  const redis = createRedis(present(process.env.REDIS_URL, 'REDIS_URL'), { maxRetriesPerRequest: null });
  const queue = createRunQueue(redis, present(process.env.REDIS_PREFIX, 'REDIS_PREFIX'));
  try {
    await addRunJobs(queue, runIds);
  } finally {
    await queue.close();
    redis.disconnect();
  }
  const run = await client.waitRun(present(runIds[0], 'the run'));
  expect(run.status).toBe('error');
  expect(run.result_summary).toMatch(
    /^Error at step 2 \(expectScreenshot "page"\): invalid definition \(expectScreenshot compares with the baselines of the deployment a run executes, and this run executes none/,
  );
  expect(await db.visualChange.count({ where: { runId: run.id } })).toBe(0);
});
