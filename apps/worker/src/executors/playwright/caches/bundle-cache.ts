import { createHash, randomUUID } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BUNDLE_LIMITS, isBundleDigest, type BundleCaps } from '@testrun/contracts';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import { BundleError, extractBundle, openBundle } from '@testrun/core/bundles';
import { CacheRoom, ENTRY_BYTES } from './bundle-cache-room';

// Playwright bundles, extracted once per worker and digest: a run or a discovery reads the bundle
// from the artifact store the first time, checks its digest, and later ones find it extracted.
// Extraction holds the bundle to BUNDLE_LIMITS again as it writes (core's extract.ts: regular files
// and folders only, the unpacked caps counted as bytes are written), so the disk it takes is known
// before it starts: the cache makes room for that much first (bundle-cache-room.ts).

/** Beside a bundle's directory: what Playwright compiled of it. */
const TRANSFORM_SUFFIX = '.transform';

function hexOf(digest: string): string {
  if (!isBundleDigest(digest)) throw new Error(`not a bundle digest: ${digest}`);
  return digest.slice('sha256:'.length);
}

/** The bundle is not in the store (never uploaded, or of another workspace), or its bytes are not its digest's. */
export class BundleUnavailableError extends Error {}

/** The bundle breaks a rule of bundles (a cap, a link or device, a package the service provides): the team's to fix. */
export class BundleRefusedError extends BundleUnavailableError {}

/** The cache's bounds (docs/WORKER.md, "Bundle cache"). */
export interface BundleCacheOptions {
  /** Bundles kept per workspace, the least recently used going first (default 20). */
  keep?: number;
  /** Bytes the cache may take on disk, bundles and what Playwright compiled of them (PLAYWRIGHT_BUNDLE_CACHE_MB). */
  maxBytes?: number;
  /** The unpacked caps each bundle is held to (default BUNDLE_LIMITS'). */
  caps?: BundleCaps;
}

/** The default of PLAYWRIGHT_BUNDLE_CACHE_MB, in bytes. */
const DEFAULT_BUNDLE_CACHE_BYTES = 2048 * 1024 * 1024;

/** Extracted bundles kept on the worker's disk, bounded in count per workspace and in bytes overall. */
export class BundleCache {
  private readonly pending = new Map<string, Promise<string>>();
  private readonly room: CacheRoom;
  private readonly caps: BundleCaps;

  constructor(
    private readonly store: ArtifactStore,
    private readonly dir: string,
    options: BundleCacheOptions = {},
  ) {
    this.caps = options.caps ?? BUNDLE_LIMITS;
    this.room = new CacheRoom(dir, {
      keep: options.keep ?? 20,
      maxBytes: options.maxBytes ?? DEFAULT_BUNDLE_CACHE_BYTES,
      // The most one extraction writes: every byte the cap allows, and a block for each file and folder.
      extraction: this.caps.maxUnpackedBytes + this.caps.maxFiles * ENTRY_BYTES,
      transformDir: (bundleDir) => this.transformDir(bundleDir),
    });
  }

  /** Where the TypeScript Playwright compiled for the bundle extracted in `bundleDir` is kept (transform-cache.ts). */
  transformDir(bundleDir: string): string {
    return `${bundleDir}${TRANSFORM_SUFFIX}`;
  }

  /** The directory the workspace's bundle is extracted in (read it only: runs copy it first). */
  async ensure(workspaceId: string, digest: string): Promise<string> {
    const target = path.join(this.dir, workspaceId, hexOf(digest));
    if (this.room.touch(target)) return target;
    let making = this.pending.get(target);
    if (!making) {
      making = this.extract(workspaceId, digest, target).finally(() => this.pending.delete(target));
      this.pending.set(target, making);
    }
    return making;
  }

  private async extract(workspaceId: string, digest: string, target: string): Promise<string> {
    const opened = await openBundle(this.store, workspaceId, digest);
    if (!opened) throw new BundleUnavailableError(`bundle ${digest} is not stored for this workspace`);
    const temporary = `${target}.${randomUUID()}.partial`;
    let release: () => void;
    try {
      release = await this.room.reserve(temporary);
    } catch (error) {
      opened.stream.destroy();
      throw error;
    }
    try {
      await mkdir(temporary, { recursive: true });
      const written = await this.write(opened.stream, temporary, digest);
      await rename(temporary, target);
      this.room.add(target, written.bytes + written.entries * ENTRY_BYTES);
    } catch (error) {
      opened.stream.destroy();
      await rm(temporary, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    } finally {
      release();
    }
    await this.room.prune(path.dirname(target)).catch(() => undefined);
    return target;
  }

  /** The store's bytes hashed and extracted into `dir` at once; a refusal of the bundle as {@link BundleRefusedError}. */
  private async write(source: NodeJS.ReadableStream, dir: string, digest: string) {
    const hash = createHash('sha256');
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    const sink = new PassThrough();
    const [read, extracted] = await Promise.allSettled([
      pipeline(source, hashing, sink),
      extractBundle(sink, dir, this.caps),
    ]);
    if (extracted.status === 'rejected') {
      const error: unknown = extracted.reason;
      // A store that failed to read makes the tar look cut short: its own error is the one to give.
      if (read.status === 'rejected' && !(error instanceof BundleError && error.reason !== 'invalid_format'))
        throw read.reason;
      if (error instanceof BundleError)
        throw new BundleRefusedError(
          `bundle ${digest} is refused: ${error.message}${error.cap ? ` (limit ${error.cap.name} = ${error.cap.value})` : ''}`,
        );
      throw error;
    }
    if (read.status === 'rejected') throw read.reason;
    if (`sha256:${hash.digest('hex')}` !== digest)
      throw new BundleUnavailableError(`bundle ${digest} does not match its digest`);
    return extracted.value;
  }
}
