import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Run } from '@testrun/contracts';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { createTenant } from '../support/harness';
import { digestOf, tarGz } from '../support/hostile-bundles';
import { present } from '../support/present';
import { deployFixture, usePlaywrightWorker, writeTeamRepository } from './playwright-site';
import { apiClient } from './support';

/**
 * Committed baselines and the missing-baseline setting (docs/VISUAL.md) through the real CLI
 * packing, API, worker, sandbox and Chromium, on the test/fixtures/pw-visual spec: a project with
 * `missingBaselines: fail` fails its first run and passes once its images are approved; those
 * images, committed beside the spec, are imported at another project's deploy (a darwin-named one
 * warned of), and its first run compares against them: the same page passes, a changed one fails
 * `screenshot_changed`. A later deploy's imported baselines win over the active version's, which
 * its history keeps. A link pretending to be a snapshot is refused with the bundle.
 */
jest.setTimeout(300_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-visual/e2e');
const SNAPS = 'e2e/tests/visual.spec.ts-snapshots';
const IMPORTED = 'imported from the bundle at deploy';

const parts = usePlaywrightWorker({ WORKER_CONCURRENCY: '1' });

let key: string;
let client: ReturnType<typeof apiClient>;
/** The images the strict project's approved first run took, by file name. */
const taken = new Map<string, Buffer>();

beforeAll(async () => {
  key = (await createTenant(parts.db, { scopes: ['deploy'] })).key;
  client = apiClient(parts.api.url, key);
});

/**
 * A team's repository of the fixture's spec, with `snapshots` (file name → bytes) committed beside
 * it, its config's options given `config` added.
 */
function repository(snapshots: Map<string, Buffer> = new Map(), config = ''): string {
  const source = readFileSync(path.join(FIXTURE, 'playwright.config.ts'), 'utf8');
  const dir = writeTeamRepository('testrun-pw-import-', {
    'testrun.yaml': '',
    'e2e/playwright.config.ts': source.replace('defineConfig({', `defineConfig({${config}`),
    'e2e/tests/visual.spec.ts': readFileSync(path.join(FIXTURE, 'tests/visual.spec.ts'), 'utf8'),
    [`${SNAPS}/.keep`]: '',
  });
  for (const [name, body] of snapshots) writeFileSync(path.join(dir, SNAPS, name), body);
  return path.join(dir, 'testrun.yaml');
}

const project = (slug: string, playwright: Record<string, unknown>) => ({
  slug,
  name: slug,
  baseUrl: parts.site.url,
  playwright: { config: 'e2e/playwright.config.ts', ...playwright },
  suites: [{ slug: 'all', name: 'all', playwright: { project: 'chromium' } }],
});

/** A suite run of the project with the page in `shade`: its id and its runs by test name. */
async function suiteRun(slug: string, shade: string) {
  const id = await client.createSuiteRun({ projectSlug: slug, suiteSlug: 'all', variables: { SHADE: shade } });
  const suite = await client.waitSuiteRun(id);
  const runs: Record<string, Run> = {};
  for (const t of suite.tests) {
    const run = await client.getRun(t.runId);
    runs[run.test_name] = run;
  }
  return { id, home: present(runs['home looks right'], 'home'), label: present(runs['label matches'], 'label') };
}

async function codeOf(run: Run): Promise<string | null> {
  return (await parts.db.run.findUniqueOrThrow({ where: { id: run.id }, select: { outcomeCode: true } })).outcomeCode;
}

async function approve(what: string): Promise<number> {
  const res = await fetch(`${parts.api.url}/api/v1/${what}/visual-changes/approve`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{}',
  });
  return res.status;
}

it('fails a first run under missingBaselines: fail, its images kept awaiting approval; approved, the next passes', async () => {
  await deployFixture(parts.api.url, key, repository(), project('pw-strict', { missingBaselines: 'fail' }));
  const first = await suiteRun('pw-strict', 'teal');
  expect([first.home.status, await codeOf(first.home)]).toEqual(['failed', 'expectation_failed']);
  expect(first.home.result_summary).toMatch(/^No baseline yet \(missingBaselines: fail\) of home\.png, heading\.png: /);
  expect([first.label.status, await codeOf(first.label)]).toEqual(['failed', 'expectation_failed']);
  expect(first.home.visual_changes?.map((c) => [c.name, c.kind])).toEqual([
    ['heading.png', 'new'],
    ['home.png', 'new'],
  ]);
  expect(await approve(`suite-runs/${first.id}`)).toBe(200);
  const next = await suiteRun('pw-strict', 'teal');
  expect([next.home.status, next.home.result_summary, next.label.status]).toEqual(['passed', 'Passed', 'passed']);
  const store = new LocalArtifactStore(present(process.env.ARTIFACTS_DIR, 'ARTIFACTS_DIR'));
  for (const b of await parts.db.baseline.findMany({ where: { status: 'approved' } }))
    taken.set(path.posix.basename(b.path), present(await store.get(b.storageKey), b.path));
  expect([...taken.keys()].sort()).toEqual([
    'heading-chromium-linux.png',
    'home-chromium-linux.png',
    'label-chromium-linux.txt',
  ]);
});

let importedId: string;

it('imports committed baselines at deploy, warning of a darwin one; a first run compares against them', async () => {
  const committed = new Map([
    ...taken,
    ['home-chromium-darwin.png', present(taken.get('home-chromium-linux.png'), 'home')],
  ]);
  const deployment = await deployFixture(
    parts.api.url,
    key,
    repository(committed),
    project('pw-import', { importBaselines: true }),
  );
  importedId = deployment.id;
  expect(deployment.warnings).toEqual([
    expect.stringMatching(/^playwright\.importBaselines: 1 imported baseline is named for another platform \(/),
  ]);
  const rows = await parts.db.baseline.findMany({ where: { deploymentId: deployment.id }, orderBy: { path: 'asc' } });
  expect(rows.map((r) => [path.posix.basename(r.path), r.status, r.approvedByKeyName, r.runId])).toEqual([
    ['heading-chromium-linux.png', 'approved', IMPORTED, null],
    ['home-chromium-darwin.png', 'approved', IMPORTED, null],
    ['home-chromium-linux.png', 'approved', IMPORTED, null],
    ['label-chromium-linux.txt', 'approved', IMPORTED, null],
  ]);
  const same = await suiteRun('pw-import', 'teal');
  expect([same.home.status, same.home.result_summary, same.home.visual_changes]).toEqual([
    'passed',
    'Passed',
    undefined,
  ]);
  expect(same.label.status).toBe('passed');
  const changed = await suiteRun('pw-import', 'crimson');
  expect([changed.home.status, await codeOf(changed.home)]).toEqual(['failed', 'screenshot_changed']);
  expect(await approve(`runs/${changed.home.id}`)).toBe(200);
});

it("wins over the active version's baselines on the next deploy, whose history keeps those", async () => {
  const next = await deployFixture(
    parts.api.url,
    key,
    repository(taken),
    project('pw-import', { importBaselines: true }),
  );
  expect(next.id).not.toBe(importedId);
  const home = `${SNAPS}/home-chromium-linux.png`;
  const [active, mine] = await Promise.all(
    [importedId, next.id].map((deploymentId) =>
      parts.db.baseline.findUniqueOrThrow({ where: { deploymentId_path: { deploymentId, path: home } } }),
    ),
  );
  expect(active?.approvedByKeyName).not.toBe(IMPORTED);
  expect([mine?.approvedByKeyName, mine?.sha256 === active?.sha256]).toEqual([IMPORTED, false]);
  const history = await parts.db.baselineHistory.findMany({
    where: { deploymentId: next.id },
    orderBy: { path: 'asc' },
  });
  expect(history.map((h) => [path.posix.basename(h.path), h.sha256 === active?.sha256])).toEqual([
    ['heading-chromium-linux.png', false],
    ['home-chromium-linux.png', true],
  ]);
  // Inherited: the darwin one the earlier version imported and this one did not.
  expect(await parts.db.baseline.count({ where: { deploymentId: next.id } })).toBe(4);
  expect((await suiteRun('pw-import', 'teal')).home.status).toBe('passed');
});

it('ends a test Playwright does not retry after a missing snapshot on that try, whatever retries its config has', async () => {
  const file = repository(new Map(), ' retries: 1,');
  await deployFixture(parts.api.url, key, file, project('pw-retry', { missingBaselines: 'fail' }));
  const { home } = await suiteRun('pw-retry', 'teal');
  expect([home.status, await codeOf(home), home.attempts]).toEqual(['failed', 'expectation_failed', 1]);
  expect(home.visual_changes?.map((c) => [c.name, c.kind])).toEqual([
    ['heading.png', 'new'],
    ['home.png', 'new'],
  ]);
});

it('refuses a bundle whose snapshot is a link, or climbs out of it, and stores nothing', async () => {
  for (const entry of [
    { name: `${SNAPS}/home-chromium-linux.png`, header: { type: 'symlink' as const, linkname: '/etc/shadow' } },
    { name: `${SNAPS}/../../../../etc/home-chromium-linux.png`, content: 'png' },
  ]) {
    const bytes = await tarGz([entry]);
    const res = await fetch(`${parts.api.url}/api/v1/projects/pw-import/bundles/${digestOf(bytes)}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(bytes),
    });
    expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([422, 'invalid_bundle']);
    const head = await fetch(`${parts.api.url}/api/v1/projects/pw-import/bundles/${digestOf(bytes)}`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(head.status).toBe(404);
  }
});
