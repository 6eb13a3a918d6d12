import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { ArtifactStoreUnavailableError, type ArtifactStore } from '@testrun/core/artifact-store';
import { present } from './present';

/** One artifact store under test, on a backend of the test's own. */
export interface StoreUnderTest {
  store: ArtifactStore;
  /** Reads the backend holds open right now: file handles of the local store, requests in flight at the S3 server. */
  openReads(): Promise<number>;
  /** Makes the backend unreachable for the rest of the suite (the S3 server stops; the directory turns into a file). */
  breakBackend(): Promise<void>;
  /** Releases the backend. */
  close(): Promise<void>;
}

async function collect(stream: Readable): Promise<{ bytes: Buffer; chunks: number }> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return { bytes: Buffer.concat(chunks), chunks: chunks.length };
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * What every ArtifactStore must do, whatever keeps the bytes: the view's Range answers, the worker's
 * writes and the 503 on an outage rest on it. `setUp` gives a fresh, empty store.
 */
export function describeArtifactStoreContract(name: string, setUp: () => Promise<StoreUnderTest>): void {
  describe(`${name} artifact store`, () => {
    let subject: StoreUnderTest;
    let store: ArtifactStore;
    const body = Buffer.from('0123456789abcdefghij');
    // Larger than any socket or stream buffer, so reading it whole or in part must stream.
    const large = randomBytes(16 * 1024 * 1024);

    beforeAll(async () => {
      subject = await setUp();
      store = subject.store;
      await store.put('ws/run/a-text.txt', body);
      await store.put('ws/run/b-video.webm', large);
    });
    afterAll(async () => subject.close());

    it('gives back what was put, whole, with the size of the whole', async () => {
      const opened = await store.open('ws/run/a-text.txt');
      expect(opened?.size).toBe(20);
      expect(opened && (await collect(opened.stream)).bytes.toString()).toBe('0123456789abcdefghij');
      expect((await store.get('ws/run/a-text.txt'))?.equals(body)).toBe(true);
    });

    it.each([
      ['the first byte', 0, 0, '0'],
      ['the last byte', 19, 19, 'j'],
      ['a suffix (bytes=-5)', 15, 19, 'fghij'],
      ['a middle part', 5, 9, '56789'],
      ['the whole as a range', 0, 19, '0123456789abcdefghij'],
    ])('streams exactly %s', async (_what, start, end, expected) => {
      const part = await store.open('ws/run/a-text.txt', { start, end });
      expect(part?.size).toBe(20);
      expect(part && (await collect(part.stream)).bytes.toString()).toBe(expected);
    });

    it.each([
      ['starting at the size', 20, 20],
      ['running past the end', 10, 20],
      ['ending before it starts', 5, 4],
      ['starting before 0', -1, 3],
    ])('refuses a range %s with a RangeError', async (_what, start, end) => {
      await expect(store.open('ws/run/a-text.txt', { start, end })).rejects.toThrow(RangeError);
    });

    it('answers null for a key with nothing under it, and refuses a key that climbs out', async () => {
      expect(await store.open('ws/run/none.zip')).toBeNull();
      expect(await store.open('ws/run/none.zip', { start: 0, end: 0 })).toBeNull();
      expect(await store.get('ws/other/none.zip')).toBeNull();
      await expect(store.open('ws/../../etc/passwd')).rejects.toThrow('invalid artifact key');
      await expect(store.put('/abs/file', body)).rejects.toThrow('invalid artifact key');
    });

    it('streams a large artifact in many chunks, byte-exact, and any part of it', async () => {
      const whole = await store.open('ws/run/b-video.webm');
      expect(whole?.size).toBe(large.length);
      const read = await collect(present(whole, 'the large artifact').stream);
      expect(read.chunks).toBeGreaterThan(1);
      expect(sha(read.bytes)).toBe(sha(large));
      const [start, end] = [large.length / 2 - 7, large.length / 2 + 1_000_003];
      const part = await store.open('ws/run/b-video.webm', { start, end });
      expect(sha((await collect(present(part, 'a part of it').stream)).bytes)).toBe(
        sha(large.subarray(start, end + 1)),
      );
    });

    it('ends the read on the backend when the reader destroys the stream', async () => {
      const opened = await store.open('ws/run/b-video.webm', { start: 1, end: large.length - 1 });
      const { stream } = present(opened, 'the large artifact');
      await new Promise((resolve) => stream.once('readable', resolve));
      const during = await subject.openReads();
      expect(during).toBeGreaterThan(0);
      const closed = new Promise((resolve) => stream.once('close', resolve));
      stream.destroy();
      await closed;
      // A closed file handle shows at once; a cut connection reaches the server a moment later.
      for (let i = 0; i < 100 && (await subject.openReads()) >= during; i++) await sleep(50);
      expect(await subject.openReads()).toBeLessThan(during);
    });

    it('keeps every one of many writes made at once', async () => {
      const bodies = Array.from({ length: 24 }, (_, i) => randomBytes(1 + i * 9_973));
      await Promise.all(bodies.map((b, i) => store.put(`ws/many/${i}-shot.png`, b)));
      const back = await Promise.all(bodies.map((_, i) => store.get(`ws/many/${i}-shot.png`)));
      back.forEach((b, i) => expect(b?.equals(present(bodies[i], `body ${i}`))).toBe(true));
    });

    it("deletes everything below a prefix and nothing beside it; an empty prefix's deletion is no error", async () => {
      await store.put('wsd/run1/a-trace.zip', body);
      await store.put('wsd/run1/b-shot.png', body);
      await store.put('wsd/run10/c-shot.png', body);
      await store.put('wsd/run2/d-shot.png', body);
      await store.deletePrefix('wsd/run1');
      expect(await store.get('wsd/run1/a-trace.zip')).toBeNull();
      expect(await store.get('wsd/run1/b-shot.png')).toBeNull();
      expect((await store.get('wsd/run10/c-shot.png'))?.equals(body)).toBe(true);
      expect((await store.get('wsd/run2/d-shot.png'))?.equals(body)).toBe(true);
      await store.deletePrefix('wsd/nothing-here');
      await expect(store.deletePrefix('wsd/../..')).rejects.toThrow('invalid artifact key');
    });

    it('deletes exactly one key, nothing below or beside it; a key with nothing under it is no error', async () => {
      await store.put('wsk/baselines/ws1/aa', body);
      await store.put('wsk/baselines/ws1/aab', body);
      await store.put('wsk/baselines/ws1/aa2/x', body);
      await store.delete('wsk/baselines/ws1/aa');
      expect(await store.get('wsk/baselines/ws1/aa')).toBeNull();
      expect((await store.get('wsk/baselines/ws1/aab'))?.equals(body)).toBe(true);
      expect((await store.get('wsk/baselines/ws1/aa2/x'))?.equals(body)).toBe(true);
      await store.delete('wsk/baselines/ws1/aa');
      await store.delete('wsk/nothing/here');
      await expect(store.delete('wsk/../../etc/shadow')).rejects.toThrow('invalid artifact key');
    });

    it('tells when a key was last written, a put of the same key again included, and null when nothing is there', async () => {
      const before = Date.now();
      await store.put('wsm/baselines/ws1/img', body);
      const first = present(await store.modifiedAt('wsm/baselines/ws1/img'), 'the first write');
      // Both clocks keep at least whole seconds; a minute either way is far more than skew on one machine.
      expect(Math.abs(first.getTime() - before)).toBeLessThan(60_000);
      await sleep(1_100);
      await store.put('wsm/baselines/ws1/img', body);
      const second = present(await store.modifiedAt('wsm/baselines/ws1/img'), 'the second write');
      expect(second.getTime()).toBeGreaterThan(first.getTime());
      expect(await store.modifiedAt('wsm/baselines/ws1/none')).toBeNull();
      expect(await store.modifiedAt('wsm/baselines')).toBeNull();
      await expect(store.modifiedAt('wsm/../x')).rejects.toThrow('invalid artifact key');
    });

    // Last: the backend stays broken.
    it('is unavailable, not empty, when its backend cannot be reached', async () => {
      await subject.breakBackend();
      await expect(store.open('ws/run/a-text.txt')).rejects.toThrow(ArtifactStoreUnavailableError);
      await expect(store.open('ws/run/a-text.txt', { start: 0, end: 0 })).rejects.toThrow(
        ArtifactStoreUnavailableError,
      );
      await expect(store.get('ws/run/none.zip')).rejects.toThrow(ArtifactStoreUnavailableError);
      await expect(store.put('ws/run/e-shot.png', body)).rejects.toThrow(ArtifactStoreUnavailableError);
      await expect(store.deletePrefix('ws/run')).rejects.toThrow(ArtifactStoreUnavailableError);
      await expect(store.delete('ws/run/a-text.txt')).rejects.toThrow(ArtifactStoreUnavailableError);
      await expect(store.modifiedAt('ws/run/a-text.txt')).rejects.toThrow(ArtifactStoreUnavailableError);
    });
  });
}
