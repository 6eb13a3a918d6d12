import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import * as tar from 'tar';
import { isBundleDigest } from '@testrun/contracts';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import { openBundle } from '@testrun/core/bundles';

// Playwright bundles, extracted once per worker and digest: a run or a discovery reads the bundle
// from the artifact store the first time, checks its digest, and later ones find it extracted.

/** Beside a bundle's directory: what Playwright compiled of it. */
const TRANSFORM_SUFFIX = '.transform';

function hexOf(digest: string): string {
  if (!isBundleDigest(digest)) throw new Error(`not a bundle digest: ${digest}`);
  return digest.slice('sha256:'.length);
}

/** The bundle is not in the store (never uploaded, or of another workspace), or its bytes are not its digest's. */
export class BundleUnavailableError extends Error {}

/** Extracted bundles kept on the worker's disk (the least recently used go past `keep`). */
export class BundleCache {
  private readonly pending = new Map<string, Promise<string>>();

  constructor(
    private readonly store: ArtifactStore,
    private readonly dir: string,
    private readonly keep = 20,
  ) {}

  /** Where the TypeScript Playwright compiled for the bundle extracted in `bundleDir` is kept (transform-cache.ts). */
  transformDir(bundleDir: string): string {
    return `${bundleDir}${TRANSFORM_SUFFIX}`;
  }

  /** The directory the workspace's bundle is extracted in (read it only: runs copy it first). */
  async ensure(workspaceId: string, digest: string): Promise<string> {
    const target = path.join(this.dir, workspaceId, hexOf(digest));
    const found = await stat(target).then(
      () => true,
      () => false,
    );
    if (found) {
      const now = new Date();
      await utimes(target, now, now).catch(() => undefined);
      return target;
    }
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
    await mkdir(temporary, { recursive: true });
    const hash = createHash('sha256');
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      // No absolute paths, no `..`, no links out, no device files: tar's defaults plus a filter.
      await pipeline(
        opened.stream,
        hashing,
        tar.x({ cwd: temporary, strict: true, filter: (_p, entry) => isPlainEntry(entry) }),
      );
      if (`sha256:${hash.digest('hex')}` !== digest)
        throw new BundleUnavailableError(`bundle ${digest} does not match its digest`);
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { recursive: true, force: true });
      throw error;
    }
    await this.prune(path.dirname(target)).catch(() => undefined);
    return target;
  }

  /** Removes the least recently used bundles of a workspace past {@link keep}. */
  private async prune(workspaceDir: string): Promise<void> {
    const names = (await readdir(workspaceDir)).filter((n) => !n.endsWith('.partial') && !n.endsWith(TRANSFORM_SUFFIX));
    if (names.length <= this.keep) return;
    const aged = await Promise.all(
      names.map(async (name) => ({ name, at: (await stat(path.join(workspaceDir, name))).mtimeMs })),
    );
    aged.sort((a, b) => a.at - b.at);
    for (const { name } of aged.slice(0, aged.length - this.keep)) {
      await rm(path.join(workspaceDir, name), { recursive: true, force: true });
      await rm(path.join(workspaceDir, `${name}${TRANSFORM_SUFFIX}`), { recursive: true, force: true });
    }
  }
}

function isPlainEntry(entry: unknown): boolean {
  const type = (entry as { type?: string }).type;
  return type === 'File' || type === 'Directory' || type === 'OldFile' || type === 'ContiguousFile';
}
