// Hostile bundles over the API: PUT …/bundles/{digest} holds what it receives to the unpacked caps
// (BUNDLE_LIMITS.maxUnpackedBytes, maxFiles) as it inflates it, stopping at the cap, and refuses
// links, devices, paths out of the bundle and the service's own packages; nothing is stored. Real
// Postgres, Redis and the local artifact store; the caps are lowered so the bombs stay small.
import request from 'supertest';
import { BUNDLE_CAPS_BY_PLAN, BUNDLE_LIMITS } from '@testrun/contracts';
import { bundleExists } from '@testrun/core/bundles';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { createTenant } from '../support/harness';
import { bombBundle, digestOf, manyFilesBundle, tarGz, type TarEntry } from '../support/hostile-bundles';
import { expectProblem } from '../support/problems';
import { bearer, buildTestApi, type TestApi } from './api-harness';

const MIB = 1024 * 1024;
const CAPS = { maxUnpackedBytes: 4 * MIB, maxFiles: 100 };
let api: TestApi;
let store: LocalArtifactStore;
let key: string;
let workspaceId: string;
beforeAll(async () => {
  api = buildTestApi({ bundleCaps: CAPS });
  store = new LocalArtifactStore(api.config.artifactsDir);
  const t = await createTenant(api.db, { scopes: ['preview'] });
  [key, workspaceId] = [t.key, t.workspace.id];
});
afterAll(async () => {
  await api.close();
});

function put(bytes: Buffer, app = api.app) {
  return request(app)
    .put(`/api/v1/projects/shop/bundles/${digestOf(bytes)}`)
    .set(bearer(key))
    .set('Content-Type', 'application/octet-stream')
    .send(bytes);
}

async function expectRefused(bytes: Buffer, code: 'payload_too_large' | 'invalid_bundle', says: string[]) {
  const problem = expectProblem(await put(bytes), code);
  for (const text of says) expect(problem.detail).toContain(text);
  expect(await bundleExists(store, workspaceId, digestOf(bytes))).toBe(false);
  return problem;
}

describe('the unpacked caps, checked as the bundle is received', () => {
  it('refuses a decompression bomb with 413 naming BUNDLE_LIMITS.maxUnpackedBytes and its value', async () => {
    const bomb = await bombBundle(64);
    expect(bomb.length).toBeLessThan(MIB);
    await expectRefused(bomb, 'payload_too_large', [`(limit BUNDLE_LIMITS.maxUnpackedBytes = ${4 * MIB})`]);
  });

  it('stops inflating at the cap: a bomb whose tail is not gzip is refused for its size, never read as broken', async () => {
    await expectRefused(await bombBundle(64, 16), 'payload_too_large', ['BUNDLE_LIMITS.maxUnpackedBytes']);
  });

  it('refuses a file larger than the whole cap on its header alone', async () => {
    const big = await tarGz([{ name: 'big.bin', content: Buffer.alloc(5 * MIB) }]);
    await expectRefused(big, 'payload_too_large', ['BUNDLE_LIMITS.maxUnpackedBytes']);
  });

  it('refuses many files with 422 naming BUNDLE_LIMITS.maxFiles, folders counted', async () => {
    await expectRefused(await manyFilesBundle(5_000), 'invalid_bundle', [
      'more than 100 files and folders (limit BUNDLE_LIMITS.maxFiles = 100)',
    ]);
    // 98 files in one folder: 98 + the folder + the manifest + the config is over 100.
    const justOver = await tarGz(Array.from({ length: 98 }, (_, i) => ({ name: `d/${i}.js`, content: '' })));
    await expectRefused(justOver, 'invalid_bundle', ['BUNDLE_LIMITS.maxFiles']);
    const justUnder = await tarGz(Array.from({ length: 97 }, (_, i) => ({ name: `d/${i}.js`, content: '' })));
    expect((await put(justUnder)).status).toBe(201);
  });

  it('holds 60,000 empty files to the default cap of BUNDLE_LIMITS.maxFiles', async () => {
    const defaults = buildTestApi({ db: api.db });
    try {
      const bytes = await manyFilesBundle(60_000);
      const problem = expectProblem(await put(bytes, defaults.app), 'invalid_bundle');
      expect(problem.detail).toContain(`(limit BUNDLE_LIMITS.maxFiles = ${BUNDLE_LIMITS.maxFiles} on the team plan)`);
      expect(await bundleExists(store, workspaceId, digestOf(bytes))).toBe(false);
    } finally {
      await defaults.close();
    }
  });

  it("holds a bundle to its workspace's plan's caps: a Free workspace's are smaller than a Team one's", async () => {
    const defaults = buildTestApi({ db: api.db });
    try {
      const free = await createTenant(api.db, { plan: 'free', scopes: ['preview'] });
      const files = BUNDLE_CAPS_BY_PLAN.free.maxFiles + 1;
      const bytes = await tarGz(Array.from({ length: files }, (_, i) => ({ name: `f${i}.js`, content: '' })));
      const refused = await request(defaults.app)
        .put(`/api/v1/projects/shop/bundles/${digestOf(bytes)}`)
        .set(bearer(free.key))
        .set('Content-Type', 'application/octet-stream')
        .send(bytes);
      const problem = expectProblem(refused, 'invalid_bundle');
      expect(problem.detail).toContain(
        `(limit BUNDLE_LIMITS.maxFiles = ${BUNDLE_CAPS_BY_PLAN.free.maxFiles} on the free plan)`,
      );
      expect(await bundleExists(store, free.workspace.id, digestOf(bytes))).toBe(false);
      // The same bundle is within a Team workspace's caps.
      expect((await put(bytes, defaults.app)).status).toBe(201);
    } finally {
      await defaults.close();
    }
  });
});

describe('entries a bundle may not hold', () => {
  const refusals: Array<[string, TarEntry, string]> = [
    ['a symlink out', { name: 'shadow', header: { type: 'symlink', linkname: '/etc/shadow' } }, 'symbolic link'],
    ['a hard link', { name: 'passwd', header: { type: 'link', linkname: 'playwright.config.js' } }, 'hard link'],
    ['a FIFO', { name: 'pipe', header: { type: 'fifo' } }, 'FIFO'],
    ['a device', { name: 'mem', header: { type: 'character-device', devmajor: 1, devminor: 1 } }, 'device'],
    ['an absolute path', { name: '/etc/cron.d/x', content: 'x' }, 'absolute path'],
    ['a path out of the bundle', { name: 'a/../../x.js', content: 'x' }, '(..)'],
  ];
  it.each(refusals)('refuses %s with 422 invalid_bundle', async (_what, entry, says) => {
    await expectRefused(await tarGz([entry]), 'invalid_bundle', [says]);
  });

  const provided: Array<[string, TarEntry]> = [
    ['node_modules/@playwright/test', { name: 'node_modules/@playwright/test/index.js', content: 'x' }],
    ['node_modules/playwright, deeper', { name: 'e2e/node_modules/playwright/package.json', content: '{}' }],
    [
      'node_modules/playwright-core as a folder',
      { name: 'node_modules/playwright-core/', header: { type: 'directory' } },
    ],
    ['a file node_modules/playwright.js', { name: 'node_modules/playwright.js', content: 'x' }],
    ['a package.json named @playwright/test', { name: 'package.json', content: '{"name":"@playwright/test"}' }],
  ];
  it.each(provided)('refuses %s: the service provides it', async (_what, entry) => {
    await expectRefused(await tarGz([entry]), 'invalid_bundle', ['the service provides']);
  });

  it('still stores a bundle of plain files and folders, with packages of its own', async () => {
    const bytes = await tarGz([
      { name: 'e2e/', header: { type: 'directory' } },
      { name: 'e2e/a.spec.js', content: 'x' },
      { name: 'node_modules/playwright-helpers/index.js', content: 'x' },
      { name: 'node_modules/@playwright/experimental-ct-core/index.js', content: 'x' },
      { name: 'package.json', content: '{"name":"shop-e2e"}' },
    ]);
    expect((await put(bytes)).status).toBe(201);
  });
});
