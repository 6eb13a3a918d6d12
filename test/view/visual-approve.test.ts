import AxeBuilder from '@axe-core/playwright';
import type { VisualApprovalLink } from '@testrun/contracts';
import { suiteRunViewUrl, signViewLink } from '@testrun/core/view-links';
import { signApprovalLink } from '@testrun/core/visual';
import { createApiKey } from '../../packages/admin/src/operations';
import type { SeededSuite } from './seed';
import { defined, openViewer, readJson, startViewEnv, type ViewEnv, type Viewer } from './support';
import { HOSTILE, SNAPSHOTS, seedVisualSuite } from './visual-seed';

// Approving in the view (docs/VISUAL.md, "Approve in the view"): a key that may approve asks the
// API for an approval link; its page shows the changes with approve buttons and approves as that
// key, with the key's scopes as they are when a button is pressed. The view's own link, and every
// variant of a link not issued for this subject, key and version, cannot approve.

let env: ViewEnv;
let suite: SeededSuite;
let viewer: Viewer;
const keys: Record<'run' | 'preview' | 'deploy', { key: string; id: string; name: string }> = {} as never;
const dialogs: string[] = [];

beforeAll(async () => {
  env = await startViewEnv();
  suite = await seedVisualSuite(env);
  const member = await env.db.membership.findFirstOrThrow({
    where: { workspaceId: suite.workspaceId },
    select: { user: { select: { email: true } } },
  });
  const scopes = { run: ['run'], preview: ['run', 'preview'], deploy: ['run', 'preview', 'deploy'] } as const;
  for (const [name, list] of Object.entries(scopes) as Array<[keyof typeof scopes, readonly string[]]>) {
    const made = await createApiKey(env.db, {
      workspaceId: suite.workspaceId,
      creatorEmail: member.user.email,
      name: `approver-${name}`,
      scopes: [...list] as never,
    });
    keys[name] = { key: made.key, id: made.id, name: `approver-${name}` };
  }
  viewer = await openViewer(env);
  viewer.page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
}, 120_000);

afterAll(async () => {
  await viewer.context.close();
  await env.close();
});

const runId = (position: number) => defined(suite.runs[position], `run ${position}`).id;

/** POST …/visual-changes/approval-link of a suite run (or a run) with a key. */
function issue(key: string, target: string = `suite-runs/${suite.suiteRunId}`): Promise<Response> {
  return fetch(`${env.api.origin}/api/v1/${target}/visual-changes/approval-link`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}` },
  });
}

/** A fresh link of the deploy key, as a path on the test's API. */
async function deployLink(target?: string): Promise<string> {
  const res = await issue(keys.deploy.key, target);
  expect(res.status).toBe(200);
  return new URL((await readJson<VisualApprovalLink>(res)).approvalUrl).pathname;
}

/** A form's POST to an approval path, as a browser on the page would send it. */
function post(path: string, ids: string[], headers: Record<string, string> = {}): Promise<Response> {
  const body = new URLSearchParams(ids.map((id) => ['change', id]));
  return fetch(`${env.api.origin}${path}`, { method: 'POST', body, redirect: 'manual', headers });
}

async function changeOf(position: number, name: string) {
  return env.db.visualChange.findFirstOrThrow({ where: { runId: runId(position), name } });
}

test('only a key that may approve every change gets a link, which says how many wait and when it ends', async () => {
  expect((await issue(keys.run.key)).status).toBe(403);
  // Every change of the seeded suite run is of the active deployment: preview is not enough.
  const preview = await issue(keys.preview.key);
  expect(preview.status).toBe(403);
  expect(await readJson<{ required_scope: string }>(preview)).toMatchObject({ required_scope: 'deploy' });
  expect((await issue(keys.deploy.key, 'suite-runs/srun_00000000000000000000000000')).status).toBe(404);
  const res = await issue(keys.deploy.key);
  const link = await readJson<VisualApprovalLink>(res);
  expect(link.pending_count).toBe(4);
  expect(link.approvalUrl).toMatch(
    new RegExp(`/view/approve/suite-runs/${suite.suiteRunId}/${keys.deploy.id}/[0-9a-z]+~[A-Za-z0-9_-]{32}$`),
  );
  const minutes = (Date.parse(link.expires_at) - Date.now()) / 60_000;
  expect(minutes).toBeGreaterThan(55);
  expect(minutes).toBeLessThanOrEqual(60);
});

test("the view's link, and every link not issued for this subject, key and version, shows nothing and approves nothing", async () => {
  const home = await changeOf(0, 'home.png');
  const viewUrl = suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId);
  const viewToken = defined(viewUrl.split('/').pop(), 'the view token');
  const valid = await deployLink();
  const base = `/view/approve/suite-runs/${suite.suiteRunId}`;
  const now = new Date();
  const grant = { subject: 'suite-run' as const, id: suite.suiteRunId, keyId: keys.deploy.id };
  const forged = [
    // The view's own page and its token where an approval token goes.
    new URL(viewUrl).pathname,
    `${base}/${keys.deploy.id}/${viewToken}`,
    `${base}/${keys.deploy.id}/${signViewLink(env.api.keys.view, 'suite-run', suite.suiteRunId, { issuedAt: now, version: 0 })}`,
    // Another key's id on this key's token, a run's token on the suite run, an expired and a revoked version's.
    valid.replace(keys.deploy.id, keys.preview.id),
    `/view/approve/runs/${runId(0)}/${keys.deploy.id}/${defined(valid.split('/').pop(), 'token')}`,
    `${base}/${keys.deploy.id}/${signApprovalLink(env.api.keys.approval, grant, 0, new Date(Date.now() - 61 * 60_000))}`,
    `${base}/${keys.deploy.id}/${signApprovalLink(env.api.keys.approval, grant, 1, now)}`,
  ];
  for (const path of forged) {
    // The view's own page reads (200) and nothing else: no POST is served there.
    const read = path === new URL(viewUrl).pathname ? 200 : 404;
    expect([path, (await fetch(`${env.api.origin}${path}`)).status]).toEqual([path, read]);
    expect([path, (await post(path, [home.id])).status]).toEqual([path, 404]);
  }
  expect((await changeOf(0, 'home.png')).approvedAt).toBeNull();
  // The real link's page: a policy that lets its forms post here and nowhere else.
  const page = await fetch(`${env.api.origin}${valid}`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-security-policy')).toContain("form-action 'self'");
  expect(page.headers.get('cache-control')).toBe('no-store');
});

test('the page shows the changes with their images; a button approves its change as the key, which becomes the baseline', async () => {
  const { page } = viewer;
  await page.goto(`${env.api.origin}${await deployLink()}`);
  expect(await page.locator('h1').textContent()).toContain(suite.suiteRunId);
  const tests = page.locator('section.approval-test');
  expect(await tests.locator('h2 a').allTextContents()).toEqual([
    'Home looks right',
    'Heading is new',
    'Hostile name',
    'Logo approved',
  ]);
  const home = page.locator('.visual-change', { hasText: 'home.png' });
  expect(await home.locator('figcaption').allTextContents()).toEqual(['Expected (the baseline)', 'Actual', 'Diff']);
  expect(await page.getByRole('button', { name: 'Approve all 4 of this suite run' }).count()).toBe(1);
  // The approved logo has no button; the hostile name is text.
  expect(await page.locator('.visual-change', { hasText: 'logo.png' }).locator('button').count()).toBe(0);
  expect(await page.getByRole('button', { name: `Approve ${HOSTILE}.png` }).count()).toBe(1);
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);

  await home.getByRole('button', { name: 'Approve home.png' }).click();
  await page.locator('.approval-notice').waitFor();
  expect((await page.locator('.approval-notice').textContent())?.replace(/\s+/g, ' ').trim()).toBe(
    'Approved 1 change: later runs compare against it.',
  );
  const approved = await changeOf(0, 'home.png');
  expect([approved.approvedByKeyId, approved.approvedByKeyName]).toEqual([keys.deploy.id, keys.deploy.name]);
  const baseline = await env.db.baseline.findFirstOrThrow({
    where: { path: `${SNAPSHOTS}/home-chromium-linux.png`, workspaceId: suite.workspaceId },
  });
  expect([baseline.status, baseline.sha256, baseline.runId]).toEqual(['approved', approved.sha256, runId(0)]);
  expect(await page.getByRole('button', { name: 'Approve all 3 of this suite run' }).count()).toBe(1);
  expect(dialogs).toEqual([]);
});

test('a form from another origin, and a key that lost its scope or was revoked, approve nothing', async () => {
  const path = await deployLink();
  const label = await changeOf(0, 'label.txt');
  expect((await post(path, [label.id], { Origin: 'https://elsewhere.example' })).status).toBe(403);
  expect((await post(path, [label.id], { 'Sec-Fetch-Site': 'cross-site', Origin: 'null' })).status).toBe(403);
  expect((await post(path, ['not-an-id'])).status).toBe(400);
  // The key's scopes as they are now decide: deploy taken away, the link cannot approve the active version's change.
  await env.db.apiKey.update({ where: { id: keys.deploy.id }, data: { scopes: ['run', 'preview'] } });
  const refused = await post(path, [label.id]);
  expect(refused.status).toBe(403);
  expect(await refused.text()).toContain('needs a key with the &quot;deploy&quot; scope');
  await env.db.apiKey.update({
    where: { id: keys.deploy.id },
    data: { scopes: ['run', 'preview', 'deploy'], revokedAt: new Date() },
  });
  expect((await fetch(`${env.api.origin}${path}`)).status).toBe(403);
  expect((await post(path, [label.id])).status).toBe(403);
  expect((await changeOf(0, 'label.txt')).approvedAt).toBeNull();
  await env.db.apiKey.update({ where: { id: keys.deploy.id }, data: { revokedAt: null } });
});

test("a run's link approves that run's changes only; revoking the suite run's view links ends every approval link", async () => {
  const path = await deployLink(`runs/${runId(2)}`);
  const label = await changeOf(0, 'label.txt');
  const hostile = await changeOf(2, `${HOSTILE}.png`);
  // Another run's change named on this run's link: nothing approved.
  const other = await post(path, [label.id]);
  expect([other.status, other.headers.get('location')]).toEqual([303, `${path}?approved=0`]);
  expect((await changeOf(0, 'label.txt')).approvedAt).toBeNull();
  const done = await post(path, [hostile.id]);
  expect([done.status, done.headers.get('location')]).toEqual([303, `${path}?approved=1`]);
  expect((await changeOf(2, `${HOSTILE}.png`)).approvedByKeyName).toBe(keys.deploy.name);
  const suiteLink = await deployLink();
  await env.db.suiteRun.update({ where: { id: suite.suiteRunId }, data: { viewTokenVersion: { increment: 1 } } });
  expect((await fetch(`${env.api.origin}${suiteLink}`)).status).toBe(404);
  expect((await post(suiteLink, [label.id])).status).toBe(404);
  expect((await changeOf(0, 'label.txt')).approvedAt).toBeNull();
});
