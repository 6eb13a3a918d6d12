import { mkdir, open, readFile, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** Inclusive byte offsets of a part of an artifact, as in an HTTP `Range` (`bytes=start-end`). */
export type ByteRange = { start: number; end: number };

/** An artifact being read: a stream of the bytes asked for, and the size of the whole artifact. */
export type OpenedArtifact = { stream: Readable; size: number };

/**
 * Where run artifacts (screenshots, traces, videos) live. The local directory store is the default
 * for one machine; the S3 store (s3-artifact-store.ts) implements the same calls for API replicas and
 * workers that share no disk. artifact-store.contract.ts holds the behaviour both must show.
 */
export interface ArtifactStore {
  put(key: string, body: Buffer): Promise<void>;
  /**
   * Streams an artifact, or only the bytes `range.start` to `range.end` (inclusive) of it, without
   * reading the rest; `size` is always the size of the whole artifact. Null when there is none under
   * that key; a RangeError when the range does not lie within it; ArtifactStoreUnavailableError when
   * the store cannot be read. The caller must consume or destroy the stream.
   */
  open(key: string, range?: ByteRange): Promise<OpenedArtifact | null>;
  /** Reads a whole artifact into memory (small files and checks); null when there is none. */
  get(key: string): Promise<Buffer | null>;
  /**
   * Removes every artifact whose key lies below `prefix` (whole key segments: a workspace's or a
   * run's, see artifactKey). Nothing there is no error.
   */
  deletePrefix(prefix: string): Promise<void>;
  /** Removes the artifact under `key` (exactly that key, nothing below it). Nothing there is no error. */
  delete(key: string): Promise<void>;
  /**
   * When the artifact under `key` was last written (a put of the same key again counts), by the
   * store's clock; null when there is none. The collection of baseline images reads it to leave
   * alone an image a worker has just stored and not yet recorded.
   */
  modifiedAt(key: string): Promise<Date | null>;
}

/**
 * The store cannot be read or written right now (a disk, mount or object store fault), as opposed to
 * an artifact that does not exist: callers answer 503, not 404 or 500. The original error is `cause`.
 */
export class ArtifactStoreUnavailableError extends Error {
  override readonly name = 'ArtifactStoreUnavailableError';
  constructor(operation: string, cause: unknown) {
    super(`the artifact store could not ${operation}: ${String(cause)}`, {
      cause,
    });
  }
}

const SAFE_KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

/** A key (or key prefix) of plain path segments that cannot climb out of the store's root; throws otherwise. */
export function checkArtifactKey(key: string): string {
  if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error(`invalid artifact key: ${key}`);
  return key;
}

/** A range the caller got wrong whatever the artifact: refused before the store is asked. */
export function checkRangeShape(range: ByteRange | undefined): void {
  if (range && (range.start < 0 || range.end < range.start || !Number.isSafeInteger(range.end)))
    throw new RangeError(`byte range ${range.start}-${range.end} is not a range`);
}

/** Node's `ENOENT`. Checked by shape: errors from Node's own realm are not `instanceof Error` everywhere (jest). */
function isMissing(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';
}

/** Artifacts as files below one directory, one file per key. */
export class LocalArtifactStore implements ArtifactStore {
  constructor(private readonly root: string) {}

  private resolve(key: string): string {
    return path.join(this.root, checkArtifactKey(key));
  }

  async put(key: string, body: Buffer): Promise<void> {
    const file = this.resolve(key);
    try {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, body);
    } catch (error) {
      throw new ArtifactStoreUnavailableError('write an artifact', error);
    }
  }

  async open(key: string, range?: ByteRange): Promise<OpenedArtifact | null> {
    const file = this.resolve(key);
    checkRangeShape(range);
    let handle: FileHandle;
    let size: number;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      // Only a missing file is "no artifact"; a store that cannot be read is an outage, not a 404.
      if (isMissing(error)) return null;
      throw new ArtifactStoreUnavailableError('read an artifact', error);
    }
    try {
      size = (await handle.stat()).size;
    } catch (error) {
      await handle.close();
      throw new ArtifactStoreUnavailableError('read an artifact', error);
    }
    if (range && (range.start < 0 || range.end < range.start || range.end >= size)) {
      await handle.close();
      throw new RangeError(`byte range ${range.start}-${range.end} is outside an artifact of ${size} bytes`);
    }
    // The stream owns the handle: it is closed when the stream ends, fails or is destroyed.
    const stream = handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    return { stream, size };
  }

  async get(key: string): Promise<Buffer | null> {
    const file = this.resolve(key);
    try {
      return await readFile(file);
    } catch (error) {
      if (isMissing(error)) return null;
      throw new ArtifactStoreUnavailableError('read an artifact', error);
    }
  }

  async deletePrefix(prefix: string): Promise<void> {
    const dir = this.resolve(prefix);
    try {
      await rm(dir, { recursive: true, force: true });
    } catch (error) {
      throw new ArtifactStoreUnavailableError('delete artifacts', error);
    }
  }

  async delete(key: string): Promise<void> {
    const file = this.resolve(key);
    try {
      // Not recursive: a key that names a folder of other keys is not an artifact.
      await rm(file, { force: true });
    } catch (error) {
      throw new ArtifactStoreUnavailableError('delete an artifact', error);
    }
  }

  async modifiedAt(key: string): Promise<Date | null> {
    const file = this.resolve(key);
    try {
      const found = await stat(file);
      return found.isFile() ? found.mtime : null;
    } catch (error) {
      if (isMissing(error)) return null;
      throw new ArtifactStoreUnavailableError('read an artifact', error);
    }
  }
}

/** The storage key of an artifact: grouped by workspace and run so a run's files sit together. */
export function artifactKey(workspaceId: string, runId: string, artifactId: string, fileName: string): string {
  return `${workspaceId}/${runId}/${artifactId}-${fileName}`;
}
