import { mkdir, writeFile } from 'node:fs/promises';
import { existsSync, linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  checkSandboxSupport,
  listScratchDir,
  mountScratch,
  readScratchFile,
  ScratchPathError,
  unmountScratch,
} from '../../../apps/worker/src/sandbox';
import { report, sandboxHarness, type Harness } from './sandbox-harness';

/*
 * The worker reads, as root, files a sandbox wrote: results, attachments, the test list, the
 * transform cache. Their folders are the tenant's, and a tenant still running can swap any of them
 * for a symlink between a check and a read. readScratchFile opens every component through the
 * folder before it, never following a link, on the scratch tmpfs only (sandbox/beneath.ts).
 */

jest.setTimeout(120_000);

let harness: Harness;
const SECRET = `host-secret-${process.pid}-${Date.now()}`;

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  harness = await sandboxHarness();
});
afterAll(() => harness.close());

test('a folder swapped for a symlink to the host while the worker reads under it never yields the host file', async () => {
  // The host folder the symlink leads to holds a file of the name the worker reads.
  const hostFolder = path.join(harness.base, 'host-folder');
  await mkdir(hostFolder);
  await writeFile(path.join(hostFolder, 'canary.txt'), SECRET);
  const scratch = 'race';
  const scratchDir = path.join(harness.base, scratch);
  const running = harness.runHostile('swap-folders', ['/work/output/rb', hostFolder, '6000'], {
    scratch,
    scratchBytes: 4 * 1024 * 1024,
  });
  for (let i = 0; i < 400 && !existsSync(path.join(scratchDir, 'ready')); i += 1) await sleep(25);
  expect(existsSync(path.join(scratchDir, 'ready'))).toBe(true);
  const state = { over: false };
  void running.finally(() => (state.over = true));
  const seen = { mine: 0, refused: 0, host: 0, listedHost: 0 };
  for (let i = 0; i < 20_000 && !state.over; i += 1) {
    const text = await readScratchFile(scratchDir, 'output/rb/canary.txt', 1024).then(String, () => null);
    if (text === SECRET) seen.host += 1;
    else if (text === 'mine') seen.mine += 1;
    else seen.refused += 1;
    const names = await listScratchDir(scratchDir, 'output/rb').then(
      (entries) => entries.map((e) => e.name),
      (): string[] => [],
    );
    if (names.includes('host-only.txt')) seen.listedHost += 1;
    if (i % 100 === 0) await writeFile(path.join(hostFolder, 'host-only.txt'), '');
  }
  const result = await running;
  expect(result).toMatchObject({ exitCode: 0, limit: null });
  expect((report(result) as { swaps: number }).swaps).toBeGreaterThan(0);
  // The race ran: some reads found its own file, and none ever the host's.
  expect(seen.mine).toBeGreaterThan(0);
  expect(seen.host).toBe(0);
  expect(seen.listedHost).toBe(0);
});

test('symlinks, FIFOs, hard links, climbing paths and large files are refused, each saying why', async () => {
  const hostSecret = path.join(harness.base, 'host-secret-3.txt');
  await writeFile(hostSecret, SECRET);
  const result = await harness.runHostile('plant-symlinks', [hostSecret, harness.base], { scratchBytes: 1024 * 1024 });
  expect(result).toMatchObject({ exitCode: 0, limit: null });
  const dir = result.scratchDir;
  const refused = (relative: string) =>
    readScratchFile(dir, relative, 1024).then(
      () => 'read',
      (error: unknown) => (error instanceof ScratchPathError ? error.reason : (error as NodeJS.ErrnoException).code),
    );
  expect(await refused('report.json')).toBe('is a symbolic link');
  expect(await refused('out/host-secret-3.txt')).toBe('is a symbolic link');
  expect(await refused('out')).toBe('is a symbolic link');
  expect(await refused('../host-secret-3.txt')).toBe('is outside the scratch directory');
  expect(await refused('/etc/hostname')).toBe('is outside the scratch directory');
  expect(await refused('pipe')).toBe('is a FIFO');
  expect(await refused('missing.txt')).toBe('ENOENT');
  mkdirSync(path.join(dir, 'sub'));
  writeFileSync(path.join(dir, 'sub', 'one.txt'), 'one');
  linkSync(path.join(dir, 'sub', 'one.txt'), path.join(dir, 'two.txt'));
  expect(await refused('two.txt')).toBe('is a hard link');
  expect(await refused('sub')).toBe('is a folder');
  writeFileSync(path.join(dir, 'big.txt'), 'x'.repeat(2048));
  expect(await refused('big.txt')).toBe('is over 1024 bytes');
  writeFileSync(path.join(dir, 'sub', 'ok.txt'), '{"ok":true}\n');
  expect((await readScratchFile(dir, './sub//ok.txt', 1024)).toString()).toBe('{"ok":true}\n');
  // What a plain read would have done: the worker, as root, follows the link to its own file.
  expect(readFileSync(path.join(dir, 'report.json'), 'utf8')).toBe(SECRET);
  await harness.expectHealthy();
});

test('a file on another file system under the scratch directory is refused', async () => {
  const dir = path.join(harness.base, 'nested');
  await mkdir(path.join(dir, 'inner'), { recursive: true });
  await mountScratch(dir, 1024 * 1024);
  try {
    await mkdir(path.join(dir, 'inner'));
    await mountScratch(path.join(dir, 'inner'), 1024 * 1024);
    await writeFile(path.join(dir, 'inner', 'x.txt'), 'x');
    await expect(readScratchFile(dir, 'inner/x.txt', 1024)).rejects.toThrow(
      'inner/x.txt in the scratch directory is on another file system than the scratch directory',
    );
  } finally {
    await unmountScratch(path.join(dir, 'inner'));
    await unmountScratch(dir);
  }
});
