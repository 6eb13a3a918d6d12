import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { BUNDLE_LIMITS, BUNDLE_MANIFEST, type BundleManifest } from '@testrun/contracts';
import type { BundlePlan } from './collect';

/** A packed bundle: its .tar.gz bytes, digest and how many files it holds (the manifest aside). */
export interface PackedBundle {
  bytes: Uint8Array<ArrayBuffer>;
  digest: string;
  files: number;
  /** What the user should know about how it was packed ({@link BundlePlan.warnings}). */
  warnings: string[];
}

/**
 * The plan as a deterministic .tar.gz: entries sorted by path, mtime 0, owner 0, modes 0644 (0755
 * for an executable), a gzip header without a time or an OS, so the same files give the same bytes
 * on any machine. A bundle over `maxBytes` is refused with a message naming the cap.
 */
export async function packBundle(
  plan: BundlePlan,
  maxBytes: number = BUNDLE_LIMITS.maxBytes,
): Promise<PackedBundle | { refusal: string }> {
  const manifest: BundleManifest = {
    format: 1,
    config: plan.config,
    playwrightVersion: plan.playwrightVersion,
    files: plan.files.size,
  };
  const entries: Array<[string, Buffer, number]> = [
    [BUNDLE_MANIFEST, Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`), 0o644],
  ];
  for (const [name, file] of [...plan.files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    entries.push([name, readFileSync(file), statSync(file).mode & 0o111 ? 0o755 : 0o644]);
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    tar.on('end', resolve);
    tar.on('error', reject);
  });
  for (const [name, content, mode] of entries)
    tar.entry({ name, mode, mtime: new Date(0), uid: 0, gid: 0, uname: '', gname: '', type: 'file' }, content);
  tar.finalize();
  await ended;
  const gz = gzipSync(Buffer.concat(chunks), { level: 9 });
  gz[9] = 255; // the gzip header's OS byte: "unknown", the same wherever it was packed
  if (gz.length > maxBytes)
    return {
      refusal: `the bundle is ${gz.length} bytes, over the cap of ${maxBytes} bytes (BUNDLE_LIMITS.maxBytes); leave large files out of include and of what the specs import`,
    };
  const bytes = new Uint8Array(gz.buffer.slice(gz.byteOffset, gz.byteOffset + gz.length));
  return {
    bytes,
    digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
    files: plan.files.size,
    warnings: plan.warnings,
  };
}
