// One Playwright test, one testId: a Playwright project deployed over the API (its bundle uploaded,
// its tests discovered by the real discovery in the sandbox) with suites whose selections overlap.
// Each Playwright test is one test of the project: one testId in every suite that selects it, one
// history, one run when the whole project runs, and a deployment that changed one line of one test
// counts that test alone as changed. Real Postgres, Redis, artifact store and sandbox.
import { createHash } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { pack } from 'tar-stream';
import { BUNDLE_LIMITS, type Deployment } from '@testrun/contracts';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { extractBundle, openBundle } from '@testrun/core/bundles';
import type { Discover } from '@testrun/core/queue';
import { discoverTests } from '../../apps/worker/src/executors/playwright';
import { readHistory } from '../../apps/api/src/view/data/history';
import { createTenant, sampleProject } from '../support/harness';
import { present } from '../support/present';
import { sandboxDir } from '../worker/playwright/sandbox-dir';
import { bearer, buildTestApi, type TestApi } from './api-harness';

jest.setTimeout(180_000);

const { base, scratch } = sandboxDir('identity');
let api: TestApi;
let store: LocalArtifactStore;

/** A worker's discovery, in-process: the stored bundle extracted, then listed in the sandbox. */
const discover: Discover = async ({ workspaceId, bundle, config }) => {
  const opened = present(await openBundle(store, workspaceId, bundle), 'the uploaded bundle');
  const dir = await mkdtemp(path.join(base(), 'bundle-'));
  await extractBundle(opened.stream, dir, BUNDLE_LIMITS);
  return discoverTests({ bundleDir: dir, configFile: config, scratchDir: await scratch() });
};

beforeAll(() => {
  api = buildTestApi({ discover });
  store = new LocalArtifactStore(api.config.artifactsDir);
});
afterAll(async () => {
  await api.close();
});

const CONFIG =
  "const { defineConfig } = require('@playwright/test');\nmodule.exports = defineConfig({ testDir: './tests' });\n";
const CART = [
  "const { test, expect } = require('@playwright/test');",
  '',
  "test('adds an item @smoke', async () => {",
  '  expect(1).toBe(1);',
  '});',
  '',
  "test('removes an item', async () => {",
  '  expect(2).toBe(2);',
  '});',
  '',
].join('\n');
const LOGIN = [
  "const { test, expect } = require('@playwright/test');",
  '',
  "test('logs in @smoke', async () => {",
  "  expect('in').toBe('in');",
  '});',
  '',
  "test('logs out', async () => {",
  "  expect('out').toBe('out');",
  '});',
  '',
].join('\n');

/** The bundle `testrun deploy` would pack of these specs, uploaded; its digest. */
async function upload(key: string, specs: { cart: string; login: string }): Promise<string> {
  const files: Record<string, string> = {
    'e2e/playwright.config.js': CONFIG,
    'e2e/tests/cart.spec.js': specs.cart,
    'e2e/tests/login.spec.js': specs.login,
  };
  const manifest = { format: 1, config: 'e2e/playwright.config.js', playwrightVersion: null, files: 3 };
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve) => tar.on('end', () => resolve()));
  for (const [name, content] of Object.entries({ 'testrun-bundle.json': JSON.stringify(manifest), ...files }))
    tar.entry({ name, mtime: new Date(0) }, content);
  tar.finalize();
  await done;
  const bytes = gzipSync(Buffer.concat(chunks));
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  const res = await request(api.app)
    .put(`/api/v1/projects/pw/bundles/${digest}`)
    .set(bearer(key))
    .set('Content-Type', 'application/octet-stream')
    .send(bytes);
  expect(res.status).toBe(201);
  return digest;
}

/** Three suites whose selections overlap: every test in `all`, the @smoke ones, the cart file's. */
const file = () => ({
  ...sampleProject('pw'),
  playwright: { config: 'e2e/playwright.config.js' },
  suites: [
    { slug: 'all', name: 'All', playwright: {} },
    { slug: 'smoke', name: 'Smoke', playwright: { grep: '@smoke' } },
    { slug: 'cart', name: 'Cart', playwright: { files: ['e2e/tests/cart.spec.js'] } },
  ],
});

async function deploy(key: string, bundle: string): Promise<Deployment> {
  const res = await request(api.app)
    .post('/api/v1/projects/pw/deployments')
    .set(bearer(key))
    .send({ project: file(), bundle, activate: true });
  expect([res.status, res.body]).toEqual([201, expect.anything()]);
  return res.body as Deployment;
}

async function enqueue(key: string, body: Record<string, unknown>) {
  const res = await request(api.app).post('/api/v1/runs').set(bearer(key)).send(body);
  expect(res.status).toBe(201);
  return res.body as { runIds?: string[]; suiteRunId?: string };
}

const idOf = (d: Deployment, name: string, suiteSlug: string) =>
  present(
    d.tests.find((t) => t.name.startsWith(name) && t.suiteSlug === suiteSlug),
    `${suiteSlug}/${name}`,
  ).testId;

it('a Playwright test that several suites select is one test: one testId, one history, one run per project run', async () => {
  const t = await createTenant(api.db, { scopes: ['deploy'] });
  const first = await deploy(t.key, await upload(t.key, { cart: CART, login: LOGIN }));
  // 4 Playwright tests, selected 8 times (all: 4, smoke: 2, cart: 2), are 4 tests.
  expect(first.tests).toHaveLength(8);
  expect(new Set(first.tests.map((x) => x.testId)).size).toBe(4);
  expect(first.changes.added).toHaveLength(4);
  const adds = idOf(first, 'adds an item', 'all');
  expect([idOf(first, 'adds an item', 'smoke'), idOf(first, 'adds an item', 'cart')]).toEqual([adds, adds]);
  const listed = await request(api.app).get('/api/v1/projects').set(bearer(t.key));
  const suites = (listed.body as { projects: Array<{ suites: Array<{ slug: string; tests: Array<{ id: string }> }> }> })
    .projects[0]?.suites;
  expect(suites?.map((s) => [s.slug, s.tests.length])).toEqual([
    ['all', 4],
    ['smoke', 2],
    ['cart', 2],
  ]);
  expect(suites?.every((s) => s.tests.some((x) => x.id === adds))).toBe(true);

  // The whole project runs each test once.
  const project = await enqueue(t.key, { projectSlug: 'pw' });
  expect(project.runIds).toHaveLength(4);
  const runTests = await api.db.run.findMany({ where: { id: { in: project.runIds } }, select: { testId: true } });
  expect(new Set(runTests.map((r) => r.testId)).size).toBe(4);

  // Its runs from two suites are one history.
  const smoke = await enqueue(t.key, { projectSlug: 'pw', suiteSlug: 'smoke' });
  const cart = await enqueue(t.key, { projectSlug: 'pw', suiteSlug: 'cart' });
  const runOf = async (suiteRunId: string | undefined) =>
    (await api.db.run.findFirstOrThrow({ where: { suiteRunId, testId: adds }, select: { id: true } })).id;
  const [inSmoke, inCart] = [await runOf(smoke.suiteRunId), await runOf(cart.suiteRunId)];
  await api.db.run.updateMany({
    where: { id: { in: [inSmoke, inCart] } },
    data: { status: 'passed', resultSummary: 'Passed.', finishedAt: new Date() },
  });
  const history = await readHistory(api.db, { runIds: [inCart] });
  expect(history.map((h) => h.id).sort()).toEqual([inSmoke, inCart].sort());

  // The id of a copy merged into the test (test_aliases, kept by the migration) still runs it.
  await api.db.testAlias.create({ data: { id: `test_merged_${t.workspace.id}`, testId: adds } });
  const { runId } = (await enqueue(t.key, { testId: `test_merged_${t.workspace.id}` })) as { runId: string };
  expect((await api.db.run.findUniqueOrThrow({ where: { id: runId } })).testId).toBe(adds);
  // And lists its runs, from every suite, as the test's own id does.
  const byId = async (testId: string) => {
    const res = await request(api.app).get('/api/v1/runs').query({ testId }).set(bearer(t.key));
    expect(res.status).toBe(200);
    return (res.body as { runs: Array<{ id: string }> }).runs.map((r) => r.id).sort();
  };
  const all = await byId(adds);
  expect(all).toEqual(expect.arrayContaining([inSmoke, inCart, runId]));
  expect(await byId(`test_merged_${t.workspace.id}`)).toEqual(all);
});

it('a deployment counts as changed only the test whose own source changed, not its siblings or moved ones', async () => {
  const t = await createTenant(api.db, { scopes: ['deploy'] });
  const first = await deploy(t.key, await upload(t.key, { cart: CART, login: LOGIN }));
  // One line of one test's body changes; every other test of the bundle is as it was.
  const edited = CART.replace('expect(2).toBe(2);', 'expect(2).toBe(3);');
  const second = await deploy(t.key, await upload(t.key, { cart: edited, login: LOGIN }));
  expect(second.changes).toEqual({
    added: [],
    removed: [],
    changed: [
      {
        suiteSlug: 'all',
        key: present(
          first.tests.find((x) => x.name === 'removes an item'),
          'the test',
        ).key,
        // Named as Playwright names it: its title path, under its spec file.
        name: 'removes an item',
        location: expect.objectContaining({ titlePath: ['removes an item'], project: '' }) as unknown,
      },
    ],
  });
  expect(second.tests.map((x) => x.testId)).toEqual(first.tests.map((x) => x.testId));
  // A line added above a file's tests moves them without changing them.
  const third = await deploy(t.key, await upload(t.key, { cart: edited, login: `// Logging in.\n${LOGIN}` }));
  expect(third.changes).toEqual({ added: [], removed: [], changed: [] });
});
