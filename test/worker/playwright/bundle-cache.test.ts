import { mkdir, mkdtemp, readdir, rm, lstat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { bundleKey } from '@testrun/core/bundles';
import {
  BundleCache,
  BundleRefusedError,
  type BundleCacheOptions,
} from '../../../apps/worker/src/executors/playwright/caches/bundle-cache';
import { mountScratch, unmountScratch } from '../../../apps/worker/src/sandbox';
import { bombBundle, digestOf, manyFilesBundle, tarGz, type TarEntry } from '../../support/hostile-bundles';

/*
 * The worker's extraction of bundles (the real BundleCache, the local artifact store): the bundle is
 * held to the unpacked caps again as it is written, links and devices and the service's own
 * packages are refused, a refused or failed extraction leaves nothing behind, and the cache is
 * bounded in bytes. The bundles are put in the store directly, as one stored before the API held
 * it to today's caps would be.
 */

const MIB = 1024 * 1024;
const CAPS = { maxUnpackedBytes: 4 * MIB, maxFiles: 100 };
const WORKSPACE = 'ws_bundle_cache';
let dir: string;
let store: LocalArtifactStore;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'testrun-bundle-cache-'));
  store = new LocalArtifactStore(path.join(dir, 'store'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function stored(bytes: Buffer): Promise<string> {
  const digest = digestOf(bytes);
  await store.put(bundleKey(WORKSPACE, digest), bytes);
  return digest;
}

function cache(options: BundleCacheOptions = { caps: CAPS }, at = path.join(dir, 'extracted')) {
  return new BundleCache(store, at, options);
}

/** Every file and folder under `root`, and their bytes. */
async function usage(root: string): Promise<{ names: string[]; bytes: number }> {
  const names: string[] = [];
  let bytes = 0;
  for (const entry of await readdir(root, { recursive: true }).catch(() => [])) {
    names.push(entry);
    bytes += (await lstat(path.join(root, entry))).size;
  }
  return { names, bytes };
}

const leftIn = async (root: string) =>
  (await usage(root)).names.filter((n) => n !== WORKSPACE && !n.endsWith('.transform'));

describe('extraction holds the bundle to the caps and the rules as it writes', () => {
  it('stops a decompression bomb at BUNDLE_LIMITS.maxUnpackedBytes and leaves nothing behind', async () => {
    const digest = await stored(await bombBundle(64));
    const bundles = cache();
    await expect(bundles.ensure(WORKSPACE, digest)).rejects.toThrow(
      new BundleRefusedError(
        `bundle ${digest} is refused: the bundle unpacks to more than ${4 * MIB} bytes (limit BUNDLE_LIMITS.maxUnpackedBytes = ${4 * MIB})`,
      ),
    );
    expect(await leftIn(path.join(dir, 'extracted'))).toEqual([]);
  });

  it('stops many files at BUNDLE_LIMITS.maxFiles, and 60,000 at the default cap, leaving nothing', async () => {
    const few = await stored(await manyFilesBundle(5_000));
    await expect(cache().ensure(WORKSPACE, few)).rejects.toThrow('(limit BUNDLE_LIMITS.maxFiles = 100)');
    const many = await stored(await manyFilesBundle(60_000));
    await expect(cache({}).ensure(WORKSPACE, many)).rejects.toThrow('(limit BUNDLE_LIMITS.maxFiles = 10000)');
    expect(await leftIn(path.join(dir, 'extracted'))).toEqual([]);
  });

  const refused: Array<[string, TarEntry, string]> = [
    ['a symlink out', { name: 'shadow', header: { type: 'symlink', linkname: '/etc/shadow' } }, 'symbolic link'],
    ['a hard link', { name: 'hard', header: { type: 'link', linkname: '/etc/passwd' } }, 'hard link'],
    ['a FIFO', { name: 'pipe', header: { type: 'fifo' } }, 'FIFO'],
    ['a path out', { name: '../../escaped.js', content: 'x' }, '(..)'],
    ['node_modules/@playwright/test', { name: 'node_modules/@playwright/test/index.js', content: 'x' }, 'provides'],
    ['a package.json named playwright', { name: 'lib/package.json', content: '{"name":"playwright"}' }, 'provides'],
  ];
  it.each(refused)('refuses %s, and writes nothing of it', async (_what, entry, says) => {
    const digest = await stored(await tarGz([{ name: 'a.spec.js', content: 'x' }, entry]));
    await expect(cache().ensure(WORKSPACE, digest)).rejects.toThrow(BundleRefusedError);
    await expect(cache().ensure(WORKSPACE, digest)).rejects.toThrow(says);
    expect(await leftIn(path.join(dir, 'extracted'))).toEqual([]);
    expect(await usage(path.join(dir, '..', 'escaped.js')).then((u) => u.names)).toEqual([]);
  });

  it('extracts a plain bundle: files with their modes, folders, nothing else', async () => {
    const digest = await stored(
      await tarGz([
        { name: 'e2e/a.spec.js', content: 'test' },
        { name: 'bin/run', content: '#!/bin/sh', header: { mode: 0o4755 } },
      ]),
    );
    const at = await cache().ensure(WORKSPACE, digest);
    expect((await usage(at)).names.sort()).toEqual([
      'bin',
      'bin/run',
      'e2e',
      'e2e/a.spec.js',
      'playwright.config.js',
      'testrun-bundle.json',
    ]);
    // setuid dropped: only permission bits, as packed.
    expect((await lstat(path.join(at, 'bin/run'))).mode & 0o7777).toBe(0o755);
  });
});

describe('the cache on disk', () => {
  it('is bounded in bytes: the least recently used bundles go first', async () => {
    // Room for two bundles at the caps (1 MiB + 100 blocks each) and a bit.
    const options = { caps: { maxUnpackedBytes: MIB, maxFiles: 100 }, maxBytes: 3 * MIB };
    const bundles = cache(options);
    const digests: string[] = [];
    for (let i = 0; i < 5; i++)
      digests.push(await stored(await tarGz([{ name: `f${i}.bin`, content: Buffer.alloc(700 * 1024, i) }])));
    const dirs: string[] = [];
    for (const digest of digests) {
      dirs.push(await bundles.ensure(WORKSPACE, digest));
      expect((await usage(path.join(dir, 'extracted'))).bytes).toBeLessThanOrEqual(options.maxBytes);
    }
    const kept = await readdir(path.join(dir, 'extracted', WORKSPACE));
    expect(kept.length).toBeLessThan(5);
    expect(kept).toContain(path.basename(dirs[4] ?? ''));
    expect(kept).not.toContain(path.basename(dirs[0] ?? ''));
  });

  it('sweeps a folder an earlier extraction left (.partial) when it makes room', async () => {
    const stale = path.join(dir, 'extracted', WORKSPACE, 'deadbeef.0000.partial');
    await mkdir(stale, { recursive: true });
    await writeFile(path.join(stale, 'big.bin'), Buffer.alloc(MIB));
    await cache().ensure(WORKSPACE, await stored(await tarGz([])));
    expect(await readdir(path.join(dir, 'extracted', WORKSPACE))).not.toContain('deadbeef.0000.partial');
  });

  it('leaves nothing when the disk fills during extraction (ENOSPC)', async () => {
    const small = path.join(dir, 'small');
    await mkdir(small);
    await mountScratch(small, 2 * MIB);
    try {
      const digest = await stored(await tarGz([{ name: 'big.bin', content: Buffer.alloc(3 * MIB, 1) }]));
      await expect(cache({ caps: CAPS }, path.join(small, 'extracted')).ensure(WORKSPACE, digest)).rejects.toThrow(
        expect.objectContaining({ code: 'ENOSPC' }) as Error,
      );
      expect(await leftIn(path.join(small, 'extracted'))).toEqual([]);
    } finally {
      await unmountScratch(small);
    }
  });
});
