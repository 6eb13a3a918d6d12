import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { keptBytes } from './transform-cache';

/*
 * The bundle cache's bounds: bundles per workspace, and bytes on disk overall. The cache lives as
 * long as its worker (a directory of its own, removed at its end, swept after a kill), so what it
 * holds is known here rather than read back from the disk: each extracted bundle's bytes (its
 * files', and a block for each file and folder), what Playwright compiled of it (transform-cache.ts,
 * measured when room is made), and the most each extraction under way may write. Before an
 * extraction starts, the least recently used bundles go until that most fits; a folder left by an
 * extraction that is no longer under way (`*.partial`) goes too.
 */

/** What a file or folder is counted for besides its bytes: a block of the disk. */
export const ENTRY_BYTES = 4096;

/** No room can be made: the extractions under way hold the whole of the cache's bytes. */
export class BundleCacheFullError extends Error {}

interface Kept {
  bytes: number;
  usedAt: number;
}

export class CacheRoom {
  private readonly kept = new Map<string, Kept>();
  private readonly reserved = new Map<string, number>();
  private uses = 0;
  private making: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly options: {
      keep: number;
      maxBytes: number;
      /** The most one extraction may write. */
      extraction: number;
      transformDir: (bundleDir: string) => string;
    },
  ) {
    if (options.extraction > options.maxBytes)
      throw new Error(
        `the bundle cache's ${options.maxBytes} bytes cannot hold one bundle at the caps (${options.extraction} bytes)`,
      );
  }

  /** Marks a kept bundle used now; false when it is not kept. */
  touch(bundleDir: string): boolean {
    const kept = this.kept.get(bundleDir);
    if (kept) kept.usedAt = ++this.uses;
    return kept !== undefined;
  }

  /** Counts a bundle just extracted into `bundleDir`. */
  add(bundleDir: string, bytes: number): void {
    this.kept.set(bundleDir, { bytes, usedAt: ++this.uses });
  }

  /**
   * Makes room for an extraction into `temporary` (least recently used bundles first) and holds it
   * until the returned release; one at a time, so two extractions never count the same room.
   */
  reserve(temporary: string): Promise<() => void> {
    const made = this.making.then(() => this.makeRoom(temporary));
    this.making = made.catch(() => undefined);
    return made;
  }

  private async makeRoom(temporary: string): Promise<() => void> {
    await this.sweepPartials();
    const need = this.options.extraction;
    let used = await this.usedBytes();
    const byAge = [...this.kept.entries()].sort(([, a], [, b]) => a.usedAt - b.usedAt);
    for (const [bundleDir] of byAge) {
      if (used + need <= this.options.maxBytes) break;
      used -= await this.evict(bundleDir);
    }
    if (used + need > this.options.maxBytes)
      throw new BundleCacheFullError("the worker's bundle cache is full of bundles being extracted");
    this.reserved.set(temporary, need);
    return () => this.reserved.delete(temporary);
  }

  /** Removes the least recently used bundles of a workspace past the count it may keep. */
  async prune(workspaceDir: string): Promise<void> {
    const own = [...this.kept.entries()].filter(([bundleDir]) => path.dirname(bundleDir) === workspaceDir);
    own.sort(([, a], [, b]) => a.usedAt - b.usedAt);
    for (const [bundleDir] of own.slice(0, Math.max(0, own.length - this.options.keep))) await this.evict(bundleDir);
  }

  /** Bytes the cache holds or has promised: bundles, what was compiled of them, extractions under way. */
  private async usedBytes(): Promise<number> {
    let used = 0;
    for (const [bundleDir, { bytes }] of this.kept)
      used += bytes + (await keptBytes(this.options.transformDir(bundleDir)).catch(() => 0));
    for (const bytes of this.reserved.values()) used += bytes;
    return used;
  }

  /** Removes a bundle and what was compiled of it; the bytes that freed. */
  private async evict(bundleDir: string): Promise<number> {
    const kept = this.kept.get(bundleDir);
    if (!kept) return 0;
    this.kept.delete(bundleDir);
    const transform = this.options.transformDir(bundleDir);
    const compiled = await keptBytes(transform).catch(() => 0);
    await rm(bundleDir, { recursive: true, force: true });
    await rm(transform, { recursive: true, force: true });
    return kept.bytes + compiled;
  }

  /** Removes what extractions left that are no longer under way (one whose removal failed, say). */
  private async sweepPartials(): Promise<void> {
    for (const workspace of await readdir(this.dir).catch(() => [])) {
      const workspaceDir = path.join(this.dir, workspace);
      for (const name of await readdir(workspaceDir).catch(() => [])) {
        const partial = path.join(workspaceDir, name);
        if (name.endsWith('.partial') && !this.reserved.has(partial))
          await rm(partial, { recursive: true, force: true }).catch(() => undefined);
      }
    }
  }
}
