import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BUNDLE_LIMITS, BUNDLE_MANIFEST, isBundleDigest, type BundleCaps } from '@testrun/contracts';
import type { ArtifactStore, OpenedArtifact } from '../artifact-store';
import { BundleError } from './errors';
import { walkBundle } from './walk';

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
      if (size > maxBytes)
        return done(
          new BundleError('too_large', `the bundle is larger than ${maxBytes} bytes`, {
            name: 'BUNDLE_LIMITS.maxBytes',
            value: maxBytes,
          }),
        );
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return { stream, size: () => size, digest: () => `sha256:${hash.digest('hex')}` };
}

/**
 * A pass-through that also feeds every chunk to the bundle's walk (walk.ts) as it arrives, with
 * backpressure from both; the walk's refusal (a cap, a link, a provided package) fails it at once,
 * so the rest of the body is neither read nor inflated. `manifest` is the root manifest's bytes, once done.
 */
function inspecting(caps: BundleCaps) {
  const sink = new PassThrough();
  const found: { manifest: Buffer | null } = { manifest: null };
  const walked = walkBundle(sink, caps, async (entry, content) => {
    if (entry.folder || entry.path !== BUNDLE_MANIFEST) return;
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(Buffer.from(chunk));
    found.manifest = Buffer.concat(chunks);
  });
  let failure: Error | null = null;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (failure) return done(failure);
      if (sink.write(chunk)) return done(null, chunk);
      sink.once('drain', () => done(failure, chunk));
    },
    flush(done) {
      sink.end();
      walked.then(() => done(), done);
    },
  });
  walked.catch((error: unknown) => {
    failure = error as Error;
    stream.destroy(failure);
  });
  return { stream, manifest: () => found.manifest };
}

/** Whether the manifest at the bundle's root is there and a format 1 object. */
function checkManifest(manifest: Buffer | null): void {
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
 * (a {@link BundleError} `too_large` past `maxBytes`, read no further), hashed, and inflated and
 * walked entry by entry (walk.ts: a refusal past the unpacked caps `caps`, default BUNDLE_LIMITS', or
 * for an entry or package it may not hold, stops it there), then checked against `digest` and for
 * its manifest, then written to the store. `created` is false when the workspace already had it
 * (the body is not read, nothing is written). Nothing is stored when it is refused.
 */
export async function storeBundle(
  store: ArtifactStore,
  input: { workspaceId: string; digest: string; body: Readable; maxBytes: number; caps?: BundleCaps },
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
    const walk = inspecting(input.caps ?? BUNDLE_LIMITS);
    await pipeline(input.body, meter.stream, walk.stream, createWriteStream(file));
    const actual = meter.digest();
    if (actual !== input.digest)
      throw new BundleError('digest_mismatch', `the body's digest is ${actual}, not ${input.digest}`);
    checkManifest(walk.manifest());
    // The store takes a whole buffer; the bytes were checked on disk first, so a refused body never sits in memory.
    await store.put(key, await readFile(file));
    return { created: true, size: meter.size() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
