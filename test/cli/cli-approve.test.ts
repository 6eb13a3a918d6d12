/**
 * `testrun approve --run ID | --suite-run ID [--change vis_…]`: the published program in this
 * process (runCliHere) against the API behind its real HTTP server. No worker takes screenshots
 * here: the visual changes a Playwright run would have found are rows written into the test
 * database, on runs of the project's active version or of a preview.
 */
import { createHash } from 'node:crypto';
import type { FailureReport, RunStatusReport, VisualApproval } from '@testrun/contracts';
import { deployProject } from '@testrun/core/projects';
import { applyProject, createApiKey } from '../../packages/admin/src/operations';
import { serveTestApi } from '../api/api-harness';
import { anyString } from '../api/typed';
import { createTenant, insertSuiteRuns, sampleProject } from '../support/harness';
import { runCliHere } from './cli-harness';

let served: Awaited<ReturnType<typeof serveTestApi>>;
beforeAll(async () => {
  served = await serveTestApi();
});
afterAll(async () => {
  await served.close();
});

/**
 * A workspace whose project `shop` has an active version, a suite run of its suite on `version`
 * (the active one, or a preview made for it), and keys with the scopes `run`, `preview` and
 * `deploy` (its own), `preview` only, and `run` only.
 */
async function workspace(version: 'active' | 'preview') {
  const db = served.api.db;
  const t = await createTenant(db, { scopes: ['run', 'preview', 'deploy'] });
  const applied = await applyProject(db, t.workspace.id, sampleProject('shop'));
  const deploymentId =
    version === 'active'
      ? applied.deploymentId
      : (
          await deployProject(db, {
            workspaceId: t.workspace.id,
            document: sampleProject('shop'),
            activate: false,
            keyId: null,
          })
        ).deployment.id;
  const suite = applied.suites[0];
  if (!suite) throw new Error('the sample project has a suite');
  const rows = await insertSuiteRuns(db, t.workspace.id, suite.id, { baseUrl: 'http://127.0.0.1:2' });
  await db.run.updateMany({ where: { id: { in: rows.runIds } }, data: { deploymentId } });
  const key = async (scope: 'run' | 'preview') =>
    (
      await createApiKey(db, {
        workspaceId: t.workspace.id,
        creatorEmail: t.email,
        name: `${scope}-${t.tag}`,
        scopes: [scope],
      })
    ).key;
  const env = (apiKey: string) => ({ TESTRUN_API_URL: `http://127.0.0.1:${served.port}`, TESTRUN_API_KEY: apiKey });
  return {
    ...t,
    deploymentId,
    suiteRunId: rows.suiteRunId ?? '',
    runIds: rows.runIds,
    deploy: env(t.key),
    preview: env(await key('preview')),
    run: env(await key('run')),
  };
}

/** Writes a visual change of `runId` as the worker records one: the image it took, by its digest. */
async function visualChange(
  w: { workspace: { id: string }; deploymentId: string; tag: string },
  runId: string,
  n: number,
  name: string,
  kind: 'new' | 'changed',
): Promise<string> {
  const id = `vis_${w.tag}${n}`;
  const sha256 = createHash('sha256').update(id).digest('hex');
  await served.api.db.visualChange.create({
    data: {
      id,
      workspaceId: w.workspace.id,
      runId,
      deploymentId: w.deploymentId,
      name,
      path: `e2e/tests/visual.spec.ts-snapshots/${name}`,
      kind,
      sha256,
      storageKey: `baselines/${w.workspace.id}/${sha256}`,
      contentType: 'image/png',
      sizeBytes: 1,
    },
  });
  return id;
}

it("approves a run's changes of the active version with a deploy key; a second approve approves nothing", async () => {
  const w = await workspace('active');
  const [runId = '', otherRun = ''] = w.runIds;
  await visualChange(w, runId, 1, 'home.png', 'changed');
  await visualChange(w, runId, 2, 'heading.png', 'new');
  await visualChange(w, otherRun, 3, 'cart.png', 'changed');

  const first = await runCliHere(['approve', '--run', runId], w.deploy);
  expect(first).toMatchObject({ code: 0, stderr: '' });
  const lines = first.stdout.split('\n');
  // One line per change, in the order the API lists them, then the count.
  expect(lines.slice(0, 2).sort()).toEqual([
    `approved heading.png (new) → deployment ${w.deploymentId}`,
    `approved home.png (changed) → deployment ${w.deploymentId}`,
  ]);
  expect(lines.slice(2)).toEqual([
    `Approved 2 visual changes of ${runId} as baselines of deployment ${w.deploymentId}.`,
    '',
  ]);
  const again = await runCliHere(['approve', '--run', runId], w.deploy);
  expect(again).toMatchObject({
    code: 0,
    stdout: `Nothing to approve: ${runId} has no visual change awaiting approval.\n`,
    stderr: '',
  });

  const status = await runCliHere(['status', runId, '--json'], w.deploy);
  const run = JSON.parse(status.stdout) as RunStatusReport;
  expect(run.visual_changes?.map((c) => [c.name, c.approved, c.approved_by]).sort()).toEqual([
    ['heading.png', true, `key-${w.tag}`],
    ['home.png', true, `key-${w.tag}`],
  ]);
  const baselines = await served.api.db.baseline.findMany({ where: { deploymentId: w.deploymentId } });
  expect(baselines.map((b) => [b.path.replace(/^.*\//, ''), b.status]).sort()).toEqual([
    ['heading.png', 'approved'],
    ['home.png', 'approved'],
  ]);
  // The other run's change is left awaiting approval.
  expect(await served.api.db.visualChange.count({ where: { runId: otherRun, approvedAt: null } })).toBe(1);
});

it('a key without the scope the change needs is told which one; exit 2, nothing approved', async () => {
  const w = await workspace('active');
  const [runId = ''] = w.runIds;
  await visualChange(w, runId, 1, 'home.png', 'changed');

  const runKey = await runCliHere(['approve', '--run', runId], w.run);
  expect(runKey).toMatchObject({ code: 2, stdout: '' });
  expect(runKey.stderr).toBe(
    'testrun: API error 403 insufficient_scope: This request needs an API key with the "preview" scope; this key\'s scopes do not include it.\n',
  );
  // A preview key may approve a preview's changes, not those of the active version (the project's baselines).
  const previewKey = await runCliHere(['approve', '--suite-run', w.suiteRunId, '--json'], w.preview);
  expect(previewKey.code).toBe(2);
  expect(previewKey.stderr).toContain('API error 403 insufficient_scope');
  expect(previewKey.stderr).toContain('"deploy" scope');
  const report = JSON.parse(previewKey.stdout) as FailureReport;
  expect(report).toMatchObject({
    status: 'error',
    exitCode: 2,
    error: { kind: 'api', status: 403, code: 'insufficient_scope' },
  });
  expect(await served.api.db.visualChange.count({ where: { runId, approvedAt: null } })).toBe(1);

  const usage = await runCliHere(['approve', '--run', runId, '--suite-run', w.suiteRunId], w.deploy);
  expect(usage.code).toBe(2);
  expect(usage.stderr).toContain('error: give exactly one of --run or --suite-run');
});

it("approves a preview's changes with a preview key: --change only those named, --json the API's answer", async () => {
  const w = await workspace('preview');
  const [runId = '', otherRun = ''] = w.runIds;
  const home = await visualChange(w, runId, 1, 'home.png', 'changed');
  await visualChange(w, otherRun, 2, 'cart.png', 'new');

  const named = await runCliHere(['approve', '--suite-run', w.suiteRunId, '--change', home, '--json'], w.preview);
  expect(named).toMatchObject({ code: 0, stderr: '' });
  const approval = JSON.parse(named.stdout) as VisualApproval;
  expect(approval).toEqual({
    approved: [
      {
        id: home,
        name: 'home.png',
        path: 'e2e/tests/visual.spec.ts-snapshots/home.png',
        kind: 'changed',
        approved: true,
        approved_at: anyString(),
        approved_by: `preview-${w.tag}`,
      },
    ],
    deployments: [w.deploymentId],
  });

  const rest = await runCliHere(['approve', '--suite-run', w.suiteRunId], w.preview);
  expect(rest).toMatchObject({ code: 0, stderr: '' });
  expect(rest.stdout).toBe(
    [
      `approved cart.png (new) → deployment ${w.deploymentId}`,
      `Approved 1 visual change of ${w.suiteRunId} as baselines of deployment ${w.deploymentId}.`,
      '',
    ].join('\n'),
  );
  const none = await runCliHere(['approve', '--suite-run', w.suiteRunId, '--json'], w.preview);
  expect(JSON.parse(none.stdout)).toEqual({ approved: [], deployments: [] });
});

it("--link prints a link that approves a preview's changes in the browser as the preview key; never under CI", async () => {
  const w = await workspace('preview');
  const [runId = ''] = w.runIds;
  const home = await visualChange(w, runId, 1, 'home.png', 'changed');
  const ci = await runCliHere(['approve', '--suite-run', w.suiteRunId, '--link'], { ...w.preview, CI: 'true' });
  expect(ci.code).toBe(2);
  expect(ci.stderr).toContain('CI is set, and a CI log is read by others');

  const printed = await runCliHere(['approve', '--suite-run', w.suiteRunId, '--link'], w.preview);
  expect(printed).toMatchObject({ code: 0, stderr: '' });
  const [intro = '', keep = '', url = ''] = printed.stdout.split('\n');
  expect(intro).toBe(
    'Open this link to look at the changes and approve them in the browser (1 change awaits approval).',
  );
  expect(keep).toMatch(/^It approves as this API key until \d{4}-\d\d-\d\dT.*Z: give it to no one\.$/);
  const path = new URL(url).pathname;
  expect(path).toMatch(new RegExp(`^/view/approve/suite-runs/${w.suiteRunId}/key_\\w+/[0-9a-z]+~[\\w-]{32}$`));
  const origin = `http://127.0.0.1:${served.port}`;
  const page = await fetch(`${origin}${path}`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain(`name="change" value="${home}"`);
  // The page's form, as the browser posts it: approved as the preview key, the preview's baseline.
  const posted = await fetch(`${origin}${path}`, {
    method: 'POST',
    body: new URLSearchParams([['change', home]]),
    redirect: 'manual',
    headers: { 'Sec-Fetch-Site': 'same-origin' },
  });
  expect([posted.status, posted.headers.get('location')]).toEqual([303, `${path}?approved=1`]);
  const change = await served.api.db.visualChange.findUniqueOrThrow({ where: { id: home } });
  expect(change.approvedByKeyName).toBe(`preview-${w.tag}`);
  expect(await served.api.db.baseline.count({ where: { deploymentId: w.deploymentId, status: 'approved' } })).toBe(1);
});
