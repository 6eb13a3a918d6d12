import path from 'node:path';
import { parseAlternateLink } from '@testrun/client';
import { createApiKey } from '../../packages/admin/src/operations';
import type { Run, SuiteRun } from '@testrun/contracts';
import { present } from '../support/present';
import { deployFixture, deployForTenant, oneSuiteProject, usePlaywrightWorker } from './playwright-site';
import type { apiClient } from './support';

/**
 * Visual comparison (docs/VISUAL.md) through the real API, worker, sandbox and Chromium: the
 * fixture test/fixtures/pw-visual calls toHaveScreenshot and toMatchSnapshot unchanged. The first
 * run makes baselines awaiting approval and passes; a run that sees the same page passes against
 * them; a changed page fails `screenshot_changed` with the images kept; an approval needs a key
 * that may change the baselines it changes (a view link cannot), and a preview's approval follows
 * the preview to its activation, and back on a rollback.
 */
jest.setTimeout(300_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-visual');
const SLUG = 'pw-visual';

const parts = usePlaywrightWorker({ WORKER_CONCURRENCY: '1' });

let deployKey: string;
let previewKey: string;
let runKey: string;
let client: ReturnType<typeof apiClient>;
const project = () =>
  oneSuiteProject(SLUG, parts.site.url, 'e2e/playwright.config.ts', {
    slug: 'all',
    playwright: { project: 'chromium' },
  });

beforeAll(async () => {
  const deployed = await deployForTenant(parts, path.join(FIXTURE, 'testrun.yaml'), project());
  deployKey = deployed.tenant.key;
  client = deployed.client;
  const workspaceId = deployed.tenant.workspace.id;
  const make = async (scopes: ('run' | 'preview')[]) =>
    (await createApiKey(parts.db, { workspaceId, creatorEmail: deployed.tenant.email, name: `k-${scopes[0]}`, scopes }))
      .key;
  previewKey = await make(['preview']);
  runKey = await make(['run']);
});

/** The outcome code a run ended with (the API gives a failed run's in its summary and the view). */
async function codeOf(run: Run): Promise<string | null> {
  const row = await parts.db.run.findUniqueOrThrow({ where: { id: run.id }, select: { outcomeCode: true } });
  return row.outcomeCode;
}

/** A suite run of the fixture with the page in `shade` (on `deploymentId`, else the active version), and its runs by test. */
async function suiteRun(shade: string, deploymentId?: string): Promise<{ suite: SuiteRun; runs: Record<string, Run> }> {
  const id = await client.createSuiteRun({
    projectSlug: SLUG,
    suiteSlug: 'all',
    variables: { SHADE: shade },
    ...(deploymentId ? { deploymentId } : {}),
  });
  const suite = await client.waitSuiteRun(id);
  const runs: Record<string, Run> = {};
  for (const t of suite.tests) {
    const run = await client.getRun(t.runId);
    runs[run.test_name] = run;
  }
  return { suite, runs };
}

async function approve(key: string, what: string, body: unknown = {}) {
  const res = await fetch(`${parts.api.url}/api/v1/${what}/visual-changes/approve`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const home = (runs: Record<string, Run>) => present(runs['home looks right'], 'the screenshot test');
const label = (runs: Record<string, Run>) => present(runs['label matches'], 'the snapshot test');

let firstChange: Run;

it('passes a first run, its snapshots kept as baselines awaiting approval', async () => {
  const { runs } = await suiteRun('teal');
  expect(home(runs).status).toBe('passed');
  expect(home(runs).result_summary).toBe('Passed; new baselines awaiting approval: home.png, heading.png');
  expect(label(runs).status).toBe('passed');
  expect(home(runs).visual_changes?.map((c) => [c.name, c.kind, c.approved])).toEqual([
    ['heading.png', 'new', false],
    ['home.png', 'new', false],
  ]);
  expect(home(runs).visual_changes?.[1]?.path).toBe('e2e/tests/visual.spec.ts-snapshots/home-chromium-linux.png');
  const baselines = await parts.db.baseline.findMany({ orderBy: { path: 'asc' } });
  expect(baselines.map((b) => [path.posix.basename(b.path), b.status])).toEqual([
    ['heading-chromium-linux.png', 'new'],
    ['home-chromium-linux.png', 'new'],
    ['label-chromium-linux.txt', 'new'],
  ]);
});

it('compares a second run against them and passes, finding nothing', async () => {
  const { runs } = await suiteRun('teal');
  expect([home(runs).status, home(runs).result_summary, home(runs).visual_changes]).toEqual([
    'passed',
    'Passed',
    undefined,
  ]);
  expect(label(runs).status).toBe('passed');
});

it('fails a changed page screenshot_changed, keeping the baseline, the image taken and the diff', async () => {
  const { runs } = await suiteRun('crimson');
  firstChange = home(runs);
  expect(firstChange.status).toBe('failed');
  expect(await codeOf(firstChange)).toBe('screenshot_changed');
  expect(firstChange.result_summary).toMatch(/^Screenshot changed at step \d+ \(.*toHaveScreenshot\(home\.png\)/);
  expect(firstChange.visual_changes?.map((c) => [c.name, c.kind, c.approved])).toEqual([
    ['heading.png', 'changed', false],
    ['home.png', 'changed', false],
  ]);
  expect(firstChange.attachments?.map((a) => a.name).sort()).toEqual(
    expect.arrayContaining(['home-actual.png', 'home-diff.png', 'home-expected.png', 'heading-diff.png']),
  );
  expect(label(runs).status).toBe('passed');
});

it('lets no view link, run key or preview key approve a change of the active version', async () => {
  // The run's page link, as GET run gives it: a capability to read, never to approve.
  const got = await fetch(`${parts.api.url}/api/v1/runs/${firstChange.id}`, {
    headers: { authorization: `Bearer ${runKey}` },
  });
  const { pathname, search } = new URL(present(parseAlternateLink(got.headers.get('link')), 'the view link'));
  expect((await fetch(`${parts.api.url}${pathname}${search}`)).status).toBe(200);
  for (const suffix of ['/visual-changes/approve', '/approve'])
    expect((await fetch(`${parts.api.url}${pathname}${suffix}${search}`, { method: 'POST' })).status).toBe(404);
  expect((await approve(runKey, `runs/${firstChange.id}`)).status).toBe(403);
  const preview = await approve(previewKey, `runs/${firstChange.id}`);
  expect([preview.status, preview.body.code, preview.body.required_scope]).toEqual([
    403,
    'insufficient_scope',
    'deploy',
  ]);
  const again = await suiteRun('crimson');
  expect(await codeOf(home(again.runs))).toBe('screenshot_changed');
});

it('approves with a deploy key: the change is the baseline, the next run passes', async () => {
  const approved = await approve(deployKey, `runs/${firstChange.id}`);
  expect(approved.status).toBe(200);
  expect((approved.body.approved as { name: string; approved: boolean }[]).map((c) => [c.name, c.approved])).toEqual([
    ['heading.png', true],
    ['home.png', true],
  ]);
  expect((await approve(deployKey, `runs/${firstChange.id}`)).body.approved).toEqual([]);
  const run = await client.getRun(firstChange.id);
  expect(run.visual_changes?.map((c) => c.approved)).toEqual([true, true]);
  expect(run.visual_changes?.[0]?.approved_by).toMatch(/^key-/);
  const { runs } = await suiteRun('crimson');
  expect(home(runs).status).toBe('passed');
  expect(await parts.db.baselineHistory.count()).toBe(2);
});

it("follows a preview: approved there only, the project's on activation, back on a rollback", async () => {
  const active = present((await client.getRun(firstChange.id)).deployment_id, 'the active deployment');
  const preview = await deployFixture(parts.api.url, deployKey, path.join(FIXTURE, 'testrun.yaml'), project(), false);
  const changed = await suiteRun('navy', preview.id);
  expect(await codeOf(home(changed.runs))).toBe('screenshot_changed');
  const approved = await approve(previewKey, `suite-runs/${changed.suite.id}`);
  expect([approved.status, approved.body.deployments]).toEqual([200, [preview.id]]);
  expect(home((await suiteRun('navy', preview.id)).runs).status).toBe('passed');
  expect(await codeOf(home((await suiteRun('navy')).runs))).toBe('screenshot_changed');
  const activated = await fetch(`${parts.api.url}/api/v1/projects/${SLUG}/deployments/${preview.id}/activate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${deployKey}` },
  });
  expect(activated.status).toBe(200);
  expect(home((await suiteRun('navy')).runs).status).toBe('passed');
  const rolledBack = await fetch(`${parts.api.url}/api/v1/projects/${SLUG}/deployments/${active}/activate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${deployKey}` },
  });
  expect(rolledBack.status).toBe(200);
  const back = await suiteRun('navy');
  expect(await codeOf(home(back.runs))).toBe('screenshot_changed');
  expect(home((await suiteRun('crimson')).runs).status).toBe('passed');
});
