import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { BundleCaps } from '@testrun/contracts';
import { walkBundle } from './walk';

/** What an extraction wrote: the files' bytes, and how many files and folders. */
export interface Extracted {
  bytes: number;
  entries: number;
}

const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Extracts a bundle's .tar.gz from `source` into `dir` (an empty folder the caller made), entry by
 * entry as it is inflated, under walk.ts's rules and `caps`: only regular files and folders are
 * written, each created anew (`O_EXCL | O_NOFOLLOW`: never through anything already there), so what
 * is written is bounded by the unpacked cap as it is written. A refusal stops it where it is; the
 * caller removes `dir` (nothing of it is usable).
 */
export async function extractBundle(source: Readable, dir: string, caps: BundleCaps): Promise<Extracted> {
  const made = new Set<string>();
  const written: Extracted = { bytes: 0, entries: 0 };
  const folder = async (parts: string[]) => {
    for (let i = 1; i <= parts.length; i++) {
      const at = parts.slice(0, i).join('/');
      if (made.has(at)) continue;
      await mkdir(path.join(dir, at), { mode: 0o755 });
      made.add(at);
      written.entries += 1;
    }
  };
  await walkBundle(source, caps, async (entry, content) => {
    if (entry.folder) return folder(entry.parts);
    await folder(entry.parts.slice(0, -1));
    const handle = await open(path.join(dir, entry.path), CREATE, entry.mode & 0o111 ? 0o755 : 0o644);
    written.entries += 1;
    try {
      for await (const chunk of content) {
        await handle.write(chunk);
        written.bytes += chunk.length;
      }
    } finally {
      await handle.close();
    }
  });
  return written;
}
