import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { ArtifactStoreUnavailableError, LocalArtifactStore } from './store';

const root = mkdtempSync(path.join(tmpdir(), 'testrun-store-'));
const store = new LocalArtifactStore(root);
const body = Buffer.from('0123456789abcdefghij');

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks);
}

test('open streams the whole artifact, or exactly the bytes of a range, with the size of the whole', async () => {
  await store.put('ws/run/a-trace.zip', body);
  const whole = await store.open('ws/run/a-trace.zip');
  expect(whole?.size).toBe(20);
  expect(whole && (await collect(whole.stream)).toString()).toBe('0123456789abcdefghij');

  for (const [start, end, expected] of [
    [0, 0, '0'],
    [5, 9, '56789'],
    [15, 19, 'fghij'],
  ] as const) {
    const part = await store.open('ws/run/a-trace.zip', { start, end });
    expect(part?.size).toBe(20);
    expect(part && (await collect(part.stream)).toString()).toBe(expected);
  }
  expect((await store.get('ws/run/a-trace.zip'))?.equals(body)).toBe(true);
});

test('a missing artifact is null; a range outside it and a key that would leave the root are refused', async () => {
  expect(await store.open('ws/run/none.zip')).toBeNull();
  expect(await store.get('ws/run/none.zip')).toBeNull();
  await store.put('ws/run/b.zip', body);
  await expect(store.open('ws/run/b.zip', { start: 10, end: 20 })).rejects.toThrow(RangeError);
  await expect(store.open('ws/run/b.zip', { start: 5, end: 4 })).rejects.toThrow(RangeError);
  await expect(store.open('ws/../../etc/passwd')).rejects.toThrow('invalid artifact key');
});

test('a store that cannot be read or written is unavailable, not empty', async () => {
  const file = path.join(root, 'a-file');
  writeFileSync(file, '');
  const broken = new LocalArtifactStore(file);
  await expect(broken.open('ws/run/a.zip')).rejects.toThrow(ArtifactStoreUnavailableError);
  await expect(broken.get('ws/run/a.zip')).rejects.toThrow(ArtifactStoreUnavailableError);
  await expect(broken.put('ws/run/a.zip', body)).rejects.toThrow(ArtifactStoreUnavailableError);
});

test('a destroyed stream closes its file', async () => {
  await store.put('ws/run/c.zip', Buffer.alloc(1024 * 1024));
  const opened = await store.open('ws/run/c.zip');
  const file = path.join(root, 'ws/run/c.zip');
  const handles = () =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === file;
      } catch {
        return false;
      }
    }).length;
  expect(handles()).toBe(1);
  const closed = new Promise((resolve) => opened?.stream.once('close', resolve));
  opened?.stream.destroy();
  await closed;
  expect(handles()).toBe(0);
});
