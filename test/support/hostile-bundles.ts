import { createHash, randomBytes } from 'node:crypto';
import { constants, createGzip, gzipSync } from 'node:zlib';
import { pack, type Header } from 'tar-stream';

/*
 * Bundles a hostile tenant would upload, made in the test: a decompression bomb (small packed, large
 * unpacked, each 1 MiB of it starting with random bytes so no ratio guard catches it), a bomb whose
 * tail is not even gzip (a reader that inflates past the cap says "not gzip"; one that stops at the
 * cap never sees it), many empty files, links and devices, and the service's own packages.
 */

const MIB = 1024 * 1024;
const MANIFEST = JSON.stringify({ format: 1, config: 'playwright.config.js', playwrightVersion: null, files: 1 });

/** A tar entry: a file's content, or a header of another type (a link, a device, a folder). */
export type TarEntry = { name: string; content?: string | Buffer; header?: Partial<Header> };

export const digestOf = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** A bundle's .tar.gz: the manifest, a config, then `entries` as given. */
export async function tarGz(entries: TarEntry[], options: { manifest?: boolean } = {}): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve) => tar.on('end', () => resolve()));
  const all: TarEntry[] = [
    ...(options.manifest === false ? [] : [{ name: 'testrun-bundle.json', content: MANIFEST }]),
    { name: 'playwright.config.js', content: 'module.exports = {};\n' },
    ...entries,
  ];
  for (const { name, content, header } of all) {
    const body = content === undefined ? undefined : Buffer.from(content);
    await new Promise<void>((resolve, reject) =>
      tar.entry({ name, mtime: new Date(0), mode: 0o644, ...header }, body ?? Buffer.alloc(0), (e) =>
        e ? reject(e) : resolve(),
      ),
    );
  }
  tar.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

/** 1 MiB that gzip packs to about a kilobyte: random bytes first, zeros after. */
function bombChunk(): Buffer {
  const chunk = Buffer.alloc(MIB);
  randomBytes(64).copy(chunk);
  return chunk;
}

/**
 * A decompression bomb: the manifest, then `mib` files of 1 MiB each (none over any cap alone),
 * streamed through gzip. With `garbageAfterMib`, the gzip stream is flushed after that many MiB of
 * files and random bytes follow: a reader that inflates that far fails on them.
 */
export async function bombBundle(mib: number, garbageAfterMib?: number): Promise<Buffer> {
  const tar = pack();
  const gzip = createGzip({ level: 1 });
  const out: Buffer[] = [];
  gzip.on('data', (c: Buffer) => out.push(c));
  const gzipped = new Promise<void>((resolve) => gzip.on('end', () => resolve()));
  tar.on('data', (c: unknown) => gzip.write(c as Buffer));
  tar.on('end', () => gzip.end());
  const entry = (name: string, body: Buffer) =>
    new Promise<void>((resolve, reject) =>
      tar.entry({ name, mtime: new Date(0), mode: 0o644 }, body, (e) => (e ? reject(e) : resolve())),
    );
  await entry('testrun-bundle.json', Buffer.from(MANIFEST));
  for (let i = 0; i < mib; i++) {
    await entry(`bomb/${String(i).padStart(5, '0')}.bin`, bombChunk());
    if (garbageAfterMib !== undefined && i + 1 === garbageAfterMib) {
      await new Promise<void>((resolve) => gzip.flush(constants.Z_SYNC_FLUSH, () => resolve()));
      const packed = Buffer.concat(out);
      return Buffer.concat([packed, randomBytes(64 * 1024)]);
    }
  }
  tar.finalize();
  await gzipped;
  return Buffer.concat(out);
}

/** `count` empty files, in folders of 1,000. */
export function manyFilesBundle(count: number): Promise<Buffer> {
  const entries: TarEntry[] = [];
  for (let i = 0; i < count; i++)
    entries.push({ name: `many/${Math.floor(i / 1000)}/${String(i).padStart(6, '0')}.txt`, content: '' });
  return tarGz(entries);
}
