import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { BUNDLE_MANIFEST, isBundleDigest } from '@testrun/contracts';
import type { ArtifactStore, OpenedArtifact } from '../artifact-store';

/** Why a bundle was refused: over the cap, not the digest named, or not a bundle. */
export class BundleError extends Error {
  override readonly name = 'BundleError';
  constructor(
    readonly reason: 'too_large' | 'digest_mismatch' | 'invalid_format',
    message: string,
  ) {
    super(message);
  }
}

/** The store key of a workspace's bundle: `bundles/<workspaceId>/<hex>.tar.gz`. */
export function bundleKey(workspaceId: string, digest: string): string {
  if (!isBundleDigest(digest)) throw new Error(`not a bundle digest: ${digest}`);
  return `bundles/${workspaceId}/${digest.slice('sha256:'.length)}.tar.gz`;
}

/** A workspace's bundle as a stream and its size, or null when the workspace has none of that digest. */
export async function openBundle(
  store: ArtifactStore,
  workspaceId: string,
  digest: string,
): Promise<OpenedArtifact | null> {
  return isBundleDigest(digest) ? store.open(bundleKey(workspaceId, digest)) : null;
}

/** Whether the workspace has the bundle (another workspace's does not count). */
export async function bundleExists(store: ArtifactStore, workspaceId: string, digest: string): Promise<boolean> {
  const opened = await openBundle(store, workspaceId, digest);
  opened?.stream.destroy();
  return opened !== null;
}

/** Counts and hashes what passes, failing once more than `maxBytes` went through. */
function measured(maxBytes: number) {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new BundleError('too_large', `the bundle is larger than ${maxBytes} bytes`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return { stream, size: () => size, digest: () => `sha256:${hash.digest('hex')}` };
}

/** Whether a file is a gzip'd tar with the manifest at its root, its JSON an object. */
async function checkFormat(file: string): Promise<void> {
  const tar = extract();
  const found: { manifest: Buffer | null } = { manifest: null };
  tar.on('entry', (header, entry, next) => {
    const name = header.name.replace(/^\.\//, '');
    if (name !== BUNDLE_MANIFEST || header.type !== 'file') {
      entry.on('end', next).resume();
      return;
    }
    const chunks: Buffer[] = [];
    entry.on('data', (c: unknown) => chunks.push(c as Buffer));
    entry.on('end', () => {
      found.manifest = Buffer.concat(chunks);
      next();
    });
  });
  try {
    await pipeline(createReadStream(file), createGunzip(), tar);
  } catch (e) {
    throw new BundleError('invalid_format', `the body is not a gzip'd tar (${(e as Error).message})`);
  }
  const { manifest } = found;
  if (manifest === null) throw new BundleError('invalid_format', `the bundle has no ${BUNDLE_MANIFEST} at its root`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(manifest.toString('utf8'));
  } catch {
    parsed = null;
  }
  if (typeof parsed !== 'object' || parsed === null || (parsed as { format?: unknown }).format !== 1)
    throw new BundleError('invalid_format', `the bundle's ${BUNDLE_MANIFEST} is not a format 1 manifest`);
}

/**
 * Stores a workspace's bundle read from `body`: streamed to a scratch file while it is counted
 * (a {@link BundleError} `too_large` past `maxBytes`, read no further) and hashed, then checked
 * against `digest` and for its format, then written to the store. `created` is false when the
 * workspace already had it (the body is not read, nothing is written).
 */
export async function storeBundle(
  store: ArtifactStore,
  input: { workspaceId: string; digest: string; body: Readable; maxBytes: number },
): Promise<{ created: boolean; size: number }> {
  const key = bundleKey(input.workspaceId, input.digest);
  const existing = await store.open(key);
  if (existing) {
    existing.stream.destroy();
    input.body.resume();
    return { created: false, size: existing.size };
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'testrun-bundle-'));
  try {
    const file = path.join(dir, 'bundle.tar.gz');
    const meter = measured(input.maxBytes);
    await pipeline(input.body, meter.stream, createWriteStream(file));
    const actual = meter.digest();
    if (actual !== input.digest)
      throw new BundleError('digest_mismatch', `the body's digest is ${actual}, not ${input.digest}`);
    await checkFormat(file);
    // The store takes a whole buffer; the bytes were checked on disk first, so a refused body never sits in memory.
    await store.put(key, await readFile(file));
    return { created: true, size: meter.size() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
