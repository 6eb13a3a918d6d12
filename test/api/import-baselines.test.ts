import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isOverCap } from '@testrun/contracts';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { BundleError, bundleKey } from '@testrun/core/bundles';
import { importBaselines, platformWarning } from '@testrun/core/projects';
import { testDb } from '../support/harness';
import { digestOf, tarGz, type TarEntry } from '../support/hostile-bundles';

/**
 * A deployment's committed baselines read from its stored bundle (docs/VISUAL.md, "Importing
 * committed baselines"), with the real artifact store and bundles made here: only snapshot files
 * of the discovered test files' `-snapshots` folders and of the globs are imported, each stored
 * once by its SHA-256; a link or a `..` path is refused with the bundle, and past a cap the deploy
 * is refused with nothing stored.
 */

const WS = 'ws_import';
const db = testDb();
afterAll(() => db.$disconnect());
const SNAPS = 'e2e/home.spec.ts-snapshots';
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

async function stored(entries: TarEntry[]) {
  const dir = mkdtempSync(path.join(tmpdir(), 'testrun-import-'));
  const store = new LocalArtifactStore(dir);
  const bytes = await tarGz(entries);
  const digest = digestOf(bytes);
  await store.put(bundleKey(WS, digest), bytes);
  const images = () => {
    const at = path.join(dir, 'baselines', WS);
    return existsSync(at) ? readdirSync(at).sort() : [];
  };
  return { store, io: { db, store }, digest, images };
}

const selection = (importBaselines: boolean | string[]) => ({
  importBaselines,
  testFiles: new Set(['e2e/home.spec.ts']),
});

it('imports the snapshot files of the test files’ -snapshots folders and of the globs, each image stored once', async () => {
  const { store, io, digest, images } = await stored([
    { name: 'e2e/home.spec.ts', content: '' },
    { name: `${SNAPS}/home-chromium-linux.png`, content: 'png-1' },
    { name: `${SNAPS}/copy-chromium-linux.png`, content: 'png-1' },
    { name: `${SNAPS}/title-chromium-linux.txt`, content: 'title' },
    { name: `${SNAPS}/nested/hero-chromium-linux.JPG`, content: 'jpg' },
    { name: `${SNAPS}/helpers.ts`, content: 'export {}' },
    { name: `${SNAPS}/data.json`, content: '{}' },
    { name: 'e2e/other.ts-snapshots/a.png', content: 'other' },
    { name: 'shots/page.png', content: 'shot' },
    { name: 'shots/node_modules/pkg/logo.png', content: 'logo' },
  ]);
  const made = await importBaselines(io, WS, digest, selection(['shots/**']));
  if ('errors' in made) throw new Error(JSON.stringify(made.errors));
  expect(made.baselines.map((b) => [b.path, b.contentType, b.sizeBytes]).sort()).toEqual([
    [`${SNAPS}/copy-chromium-linux.png`, 'image/png', 5],
    [`${SNAPS}/home-chromium-linux.png`, 'image/png', 5],
    [`${SNAPS}/nested/hero-chromium-linux.JPG`, 'image/jpeg', 3],
    [`${SNAPS}/title-chromium-linux.txt`, 'text/plain', 5],
    ['shots/page.png', 'image/png', 4],
  ]);
  const home = made.baselines.find((b) => b.path.endsWith('home-chromium-linux.png'));
  expect(home?.storageKey).toBe(`baselines/${WS}/${sha('png-1')}`);
  expect((await store.get(home?.storageKey ?? ''))?.toString()).toBe('png-1');
  expect(images()).toEqual([sha('png-1'), sha('title'), sha('jpg'), sha('shot')].sort());
  expect(made.warnings).toEqual([]);
  // Each image noted for the collection before it was stored: a deploy refused after this leaves none that nothing leads to.
  const noted = await db.$queryRaw<Array<{ storage_key: string }>>`
    SELECT storage_key FROM baseline_image_candidates WHERE storage_key LIKE ${`baselines/${WS}/%`} ORDER BY storage_key`;
  expect(noted.map((r) => r.storage_key)).toEqual(images().map((i) => `baselines/${WS}/${i}`));
  const folders = await importBaselines(io, WS, digest, selection(true));
  expect('baselines' in folders && folders.baselines.map((b) => b.path)).not.toContain('shots/page.png');
});

it('refuses a link or a climbing path pretending to be a snapshot with the bundle, storing nothing', async () => {
  for (const entry of [
    { name: `${SNAPS}/home-chromium-linux.png`, header: { type: 'symlink' as const, linkname: '/etc/shadow' } },
    { name: `${SNAPS}/../../../etc/home-chromium-linux.png`, content: 'png' },
  ]) {
    const { store, digest, images } = await stored([{ name: `${SNAPS}/a.png`, content: 'a' }, entry]);
    await expect(importBaselines({ db, store }, WS, digest, selection(true))).rejects.toBeInstanceOf(BundleError);
    expect(images()).toEqual([]);
  }
});

it('refuses past the caps, naming each, with nothing stored', async () => {
  const { store, digest, images } = await stored([
    { name: `${SNAPS}/big.png`, content: 'x'.repeat(11) },
    { name: `${SNAPS}/b.png`, content: 'b' },
    { name: `${SNAPS}/c.png`, content: 'c' },
  ]);
  const refused = async (limits: { maxFiles: number; maxBytes: number; maxFileBytes: number }) => {
    const made = await importBaselines({ db, store }, WS, digest, selection(true), limits);
    return 'errors' in made ? made.errors : [];
  };
  const big = await refused({ maxFiles: 10, maxBytes: 100, maxFileBytes: 10 });
  expect(big).toEqual([
    {
      path: '/playwright/importBaselines',
      message: `imports "${SNAPS}/big.png", 11 bytes, over the cap for one baseline (limit BASELINE_IMPORT_LIMITS.maxFileBytes = 10)`,
    },
  ]);
  expect(big.every((e) => isOverCap(e.message))).toBe(true);
  expect((await refused({ maxFiles: 2, maxBytes: 100, maxFileBytes: 100 })).map((e) => e.message)).toEqual([
    'imports 3 snapshot files, more than a sandbox is given (limit BASELINE_IMPORT_LIMITS.maxFiles = 2)',
  ]);
  expect((await refused({ maxFiles: 10, maxBytes: 12, maxFileBytes: 100 })).map((e) => e.message)).toEqual([
    'imports 13 bytes of snapshots, more than a sandbox is given (limit BASELINE_IMPORT_LIMITS.maxBytes = 12)',
  ]);
  expect(images()).toEqual([]);
});

it('warns of baselines named for another platform, which Playwright on linux never looks up', () => {
  expect(platformWarning([`${SNAPS}/home-chromium-linux.png`, 'shots/linux/a.png'])).toBeNull();
  const warning = platformWarning([
    `${SNAPS}/home-chromium-darwin.png`,
    `${SNAPS}/home-chromium-linux.png`,
    `${SNAPS}/title-chromium-win32.txt`,
    'shots/darwin/page.png',
    'shots/darwinism.png',
  ]);
  expect(warning).toMatch(/^playwright\.importBaselines: 3 imported baselines are named for another platform \(/);
  expect(warning).toContain('the first run here makes linux baselines');
});
