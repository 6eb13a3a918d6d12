import { createReadStream } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';

/**
 * Where run artifacts (screenshots, traces, videos) live. The local directory store is the default;
 * an object store implements the same four calls.
 */
export interface ArtifactStore {
  put(key: string, body: Buffer): Promise<void>;
  /** Streams an artifact, or null when there is none under that key. */
  open(key: string): Promise<{ stream: Readable; size: number } | null>;
  get(key: string): Promise<Buffer | null>;
  delete(key: string): Promise<void>;
}

const SAFE_KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

export class LocalArtifactStore implements ArtifactStore {
  constructor(private readonly root: string) {}

  private resolve(key: string): string {
    if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error(`invalid artifact key: ${key}`);
    return path.join(this.root, key);
  }

  async put(key: string, body: Buffer): Promise<void> {
    const file = this.resolve(key);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, body);
  }

  async open(key: string): Promise<{ stream: Readable; size: number } | null> {
    const file = this.resolve(key);
    try {
      const s = await stat(file);
      return { stream: createReadStream(file), size: s.size };
    } catch {
      return null;
    }
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.resolve(key));
    } catch {
      return null;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.resolve(key), { force: true });
  }
}

/** The storage key of an artifact: grouped by workspace and run so a run's files sit together. */
export function artifactKey(workspaceId: string, runId: string, artifactId: string, fileName: string): string {
  return `${workspaceId}/${runId}/${artifactId}-${fileName}`;
}
