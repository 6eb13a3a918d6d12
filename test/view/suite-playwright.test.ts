import AxeBuilder from '@axe-core/playwright';
import type { Run, RunCreateResponse, SuiteRun } from '@testrun/contracts';
import { runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import type { Page } from 'playwright';
import { applySampleProject, createTenant, insertSuiteRuns, sampleProject } from '../support/harness';
import { defined, openViewer, readJson, startViewEnv, type ViewEnv, type Viewer } from './support';

// The suite page of a Playwright suite run lists its tests by spec file with their file:line; a
// preview's suite run says it is one, of which version, with the version's warnings; and a page
// says how long its suite run or run waited in the queue and why. The rows are the API's own (a
// preview deployed and run through the API, queued behind the workspace's earlier suite run); the
// earlier suite run's outcomes and Playwright definitions (what a deployment of a bundle gives its
// runs) are written to its rows, as only the pages are under test here.
let env: ViewEnv;
let viewer: Viewer;
let apiKey: string;
let filesSuiteRunId: string;
let filesRunIds: string[];
let preview: { suiteRunId: string; runIds: string[]; version: number };

/** A Playwright test as its run's definition holds it, and how the test below ends it. */
type Spec = { file: string; line: number; titlePath: string[]; project: string; ends: 'passed' | 'failed' };

// In suite order; the fifth test of the project is disabled (skipped at creation).
const SPECS: Spec[] = [
  { file: 'tests/cart.spec.ts', line: 12, titlePath: ['cart', 'adds an item'], project: 'chromium', ends: 'passed' },
  { file: 'tests/auth.spec.ts', line: 3, titlePath: ['signs in'], project: 'chromium', ends: 'passed' },
  { file: 'tests/cart.spec.ts', line: 5, titlePath: ['cart', 'removes an item'], project: 'chromium', ends: 'failed' },
  { file: 'tests/auth.spec.ts', line: 3, titlePath: ['signs in'], project: 'firefox', ends: 'passed' },
  { file: 'tests/auth.spec.ts', line: 9, titlePath: ['signs out'], project: '', ends: 'passed' },
];

const WARNINGS = ['the config starts a webServer: the service ignores it and runs the tests against the baseUrl'];

function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${env.api.origin}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
  });
}

/** Ends the suite run's runs as SPECS say, each with its Playwright definition, and the suite run with them. */
async function finishAsPlaywright(suiteRunId: string, runIds: string[]): Promise<void> {
  const at = new Date();
  for (const [i, id] of runIds.entries()) {
    const spec = defined(SPECS[i], `spec ${i}`);
    const definition = {
      playwright: {
        bundle: 'sha256:00',
        config: 'playwright.config.ts',
        column: 3,
        browser: 'chromium',
        tags: [],
        ...spec,
      },
    };
    const failed = spec.ends === 'failed';
    await env.db.$executeRawUnsafe(
      `UPDATE runs SET kind = 'playwright', steps = $2::jsonb, test_name = $3,
        status = CASE WHEN status = 'skipped' THEN status ELSE $4::"RunStatus" END,
        outcome_code = CASE WHEN status = 'skipped' THEN NULL WHEN $4 = 'failed' THEN 'expectation_failed'::"RunOutcomeCode" END,
        outcome_message = CASE WHEN $4 = 'failed' AND status <> 'skipped' THEN 'expected 1 item, found 2' END,
        result_summary = CASE WHEN status = 'skipped' THEN result_summary ELSE $5 END,
        attempt = CASE WHEN status = 'skipped' THEN 0 ELSE 1 END,
        started_at = CASE WHEN status = 'skipped' THEN NULL ELSE $6::timestamptz END, finished_at = $6::timestamptz,
        duration_ms = CASE WHEN status = 'skipped' THEN NULL ELSE 1200 END
      WHERE id = $1`,
      id,
      JSON.stringify(definition),
      spec.titlePath.join(' › '),
      spec.ends,
      failed ? 'Failed: expected 1 item, found 2.' : 'Passed in 1.2 s.',
      at,
    );
  }
  // It ran the active version 1, as the API records it (not a preview).
  await env.db.$executeRawUnsafe(
    `UPDATE suite_runs s SET status = 'failed', queued_count = 0, passed_count = 3, failed_count = 1,
      started_at = s.created_at, finished_at = $2::timestamptz, deployment_id = p.active_deployment_id, preview = false
      FROM projects p WHERE p.id = s.project_id AND s.id = $1`,
    suiteRunId,
    at,
  );
}

beforeAll(async () => {
  env = await startViewEnv();
  const tenant = await createTenant(env.db, { scopes: ['preview'] });
  apiKey = tenant.key;
  const file = sampleProject(`pw-${tenant.tag}`, { baseUrl: env.site.url, count: 5, disabled: 1 });
  const applied = await applySampleProject(env.db, tenant.workspace.id, file);
  const suite = defined(applied.suites[0], 'the suite');
  // The workspace's first suite run: 4 runs queued (and one skipped) when the preview is enqueued.
  const first = await insertSuiteRuns(env.db, tenant.workspace.id, suite.id, { baseUrl: env.site.url });
  filesSuiteRunId = defined(first.suiteRunId, 'the first suite run');
  filesRunIds = first.runIds;

  // A preview: deployed without activating it, then run by its id, through the API.
  const deployedRes = await api(`/api/v1/projects/${file.slug}/deployments`, {
    method: 'POST',
    body: JSON.stringify({ project: file, activate: false }),
  });
  expect(deployedRes.status).toBe(201);
  const deployed = { body: await readJson<{ id: string; version: number }>(deployedRes) };
  await env.db.$executeRawUnsafe(
    'UPDATE deployments SET warnings = $1::jsonb WHERE id = $2',
    JSON.stringify(WARNINGS),
    deployed.body.id,
  );
  const enqueuedRes = await api('/api/v1/runs', {
    method: 'POST',
    body: JSON.stringify({ projectSlug: file.slug, suiteSlug: 'smoke', deploymentId: deployed.body.id }),
  });
  expect(enqueuedRes.status).toBe(201);
  const enqueued = { body: await readJson<RunCreateResponse>(enqueuedRes) };
  const suiteRunId = 'suiteRunId' in enqueued.body ? enqueued.body.suiteRunId : '';
  const runs = await env.db.run.findMany({ where: { suiteRunId }, orderBy: { position: 'asc' }, select: { id: true } });
  preview = { suiteRunId, runIds: runs.map((r) => r.id), version: deployed.body.version };

  await finishAsPlaywright(filesSuiteRunId, filesRunIds);
  viewer = await openViewer(env);
}, 120_000);

afterAll(async () => {
  await viewer.context.close();
  await env.close();
});

/** Each spec file section's heading and its tests as [title path, file:line, project], in page order. */
function fileSections(page: Page) {
  return page.locator('section.group-file').evaluateAll((sections) =>
    sections.map((s) => ({
      heading: (s.querySelector('h2')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
      hidden: s.hasAttribute('hidden'),
      tests: [...s.querySelectorAll('li.test')].map((li) => [
        li.querySelector('.test-name')?.textContent ?? '',
        li.querySelector('[data-file-line]')?.textContent ?? '',
        li.querySelector('[data-project]')?.textContent ?? '',
      ]),
    })),
  );
}

test("a Playwright suite run's tests are grouped by spec file, in file order, by line within a file", async () => {
  const { page } = viewer;
  await page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, filesSuiteRunId));
  expect(await fileSections(page)).toEqual([
    {
      heading: 'tests/cart.spec.ts (2, 1 failed)',
      hidden: false,
      tests: [
        ['cart › removes an item', 'tests/cart.spec.ts:5', 'chromium'],
        ['cart › adds an item', 'tests/cart.spec.ts:12', 'chromium'],
      ],
    },
    {
      heading: 'tests/auth.spec.ts (3)',
      hidden: false,
      tests: [
        ['signs in', 'tests/auth.spec.ts:3', 'chromium'],
        ['signs in', 'tests/auth.spec.ts:3', 'firefox'],
        ['signs out', 'tests/auth.spec.ts:9', ''],
      ],
    },
  ]);
  // No status groups beside them; the counters still count the whole suite run.
  expect(await page.locator('section.group-failed, section.group-passed').count()).toBe(0);
  expect(await page.locator('[data-count="total"]').textContent()).toBe('5');
  expect(await page.locator('[data-count="failed"]').textContent()).toBe('1');
  expect(await page.locator('[data-count="skipped"]').textContent()).toBe('1');
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
});

test('the status filter narrows the files, on the server and in the page', async () => {
  const { page } = viewer;
  await page.goto(`${suiteRunViewUrl(env.api.origin, env.api.keys.view, filesSuiteRunId)}?status=failed`);
  const visible = () =>
    fileSections(page).then((all) => all.filter((s) => !s.hidden).map((s) => [s.heading, s.tests.length] as const));
  expect(await visible()).toEqual([['tests/cart.spec.ts (2, 1 failed)', 2]]);
  expect(await page.locator('section.group-file:visible li.test:visible .test-name').allTextContents()).toEqual([
    'cart › removes an item',
  ]);
  await page
    .locator('.filter-chips')
    .getByRole('link', { name: /^All \d+$/ })
    .click();
  expect(await page.locator('section.group-file:visible').count()).toBe(2);
  expect(await page.locator('li.test:visible').count()).toBe(5);
});

test('a preview suite run is marked as one, with its version, and lists the version warnings', async () => {
  const { page } = viewer;
  await page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, preview.suiteRunId));
  expect(preview.version).toBe(2);
  expect(await page.locator('h1 [data-preview]').textContent()).toBe('preview of version 2');
  expect(await page.locator('.meta div', { hasText: 'Version' }).locator('dd').textContent()).toBe(
    '2 (a preview: not the active version when it was enqueued)',
  );
  expect(await page.locator('section.deployment-warnings li').allTextContents()).toEqual(WARNINGS);
  // Its run's page says so too.
  await page.goto(runViewUrl(env.api.origin, env.api.keys.view, defined(preview.runIds[0], 'a run')));
  expect(await page.locator('h1 [data-preview]').textContent()).toBe('preview of version 2');
  // A suite run of the active version has no such mark.
  await page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, filesSuiteRunId));
  expect(await page.locator('[data-preview]').count()).toBe(0);
  expect(await page.locator('.meta div', { hasText: 'Version' }).locator('dd').textContent()).toBe('1');
});

test('a queued suite run says why it waits, and once started how long it waited and why', async () => {
  const { page } = viewer;
  const suiteUrl = suiteRunViewUrl(env.api.origin, env.api.keys.view, preview.suiteRunId);
  await page.goto(suiteUrl);
  expect(await page.locator('[data-queue-wait]').textContent()).toMatch(
    /^\s*Waiting in the queue for .+ so far: behind 4 runs of its workspace enqueued before it\.\s*$/,
  );

  // The API says why too, and while it waits its body (so its ETag, which long polls compare) stays the same.
  const waiting = await api(`/api/v1/suite-runs/${preview.suiteRunId}`);
  expect((await readJson<SuiteRun>(waiting)).queue_wait).toEqual({
    waited_ms: null,
    runs_ahead: 4,
    reason: 'workspace_runs_ahead',
  });
  const again = await api(`/api/v1/suite-runs/${preview.suiteRunId}`);
  expect(again.headers.get('etag')).toBe(waiting.headers.get('etag'));

  // The open page's line moves on while it waits, without a reload: two minutes later it says so.
  await env.db.$executeRawUnsafe(
    `UPDATE suite_runs SET created_at = created_at - interval '2 minutes' WHERE id = $1`,
    preview.suiteRunId,
  );
  await page.waitForFunction(() =>
    /^Waiting in the queue for 2 min \d\d s so far: behind 4 runs/.test(
      document.querySelector('[data-queue-wait]')?.textContent.trim() ?? '',
    ),
  );

  // As in the report that asked for it: created, then started 5 min 1 s later.
  await env.db.$executeRawUnsafe(
    `UPDATE suite_runs SET status = 'running', queued_count = queued_count - 1, running_count = 1,
      created_at = now() - interval '10 minutes', started_at = now() - interval '10 minutes' + interval '301 seconds'
      WHERE id = $1`,
    preview.suiteRunId,
  );
  await env.db.$executeRawUnsafe(
    `UPDATE runs SET status = CASE WHEN position = 1 THEN 'running'::"RunStatus" ELSE status END,
      attempt = CASE WHEN position = 1 THEN 1 ELSE attempt END,
      created_at = now() - interval '10 minutes',
      started_at = CASE WHEN position = 1 THEN now() - interval '10 minutes' + interval '301 seconds' END
      WHERE suite_run_id = $1`,
    preview.suiteRunId,
  );
  await page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, preview.suiteRunId));
  expect((await page.locator('[data-queue-wait]').textContent())?.trim()).toBe(
    'Waited 5 min 01 s in the queue: behind 4 runs of its workspace enqueued before it.',
  );
  const second = defined(preview.runIds[1], 'the second run');
  await page.goto(runViewUrl(env.api.origin, env.api.keys.view, second));
  expect((await page.locator('[data-queue-wait]').textContent())?.trim()).toBe(
    'Waited 5 min 01 s in the queue: behind 5 runs of its workspace enqueued before it.',
  );

  // The API says the same (queue_wait), for `testrun run` to print.
  const suiteRun = await readJson<SuiteRun>(await api(`/api/v1/suite-runs/${preview.suiteRunId}`));
  expect(suiteRun.queue_wait).toEqual({ waited_ms: 301_000, runs_ahead: 4, reason: 'workspace_runs_ahead' });
  const run = await readJson<Run>(await api(`/api/v1/runs/${second}`));
  expect(run.queue_wait).toEqual({ waited_ms: 301_000, runs_ahead: 5, reason: 'workspace_runs_ahead' });
  // The first suite run was created without a record of its line (as before this was recorded):
  // it says how long it waited, not why, and the API gives no queue_wait.
  await page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, filesSuiteRunId));
  expect((await page.locator('[data-queue-wait]').textContent())?.trim()).toBe('Waited 0 ms in the queue.');
  const first = await readJson<SuiteRun>(await api(`/api/v1/suite-runs/${filesSuiteRunId}`));
  expect(first.queue_wait).toBeUndefined();
});
