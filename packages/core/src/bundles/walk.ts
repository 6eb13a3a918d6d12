import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract, type Header } from 'tar-stream';
import { PROVIDED_PACKAGES, type BundleCaps } from '@testrun/contracts';
import { BundleError } from './errors';

/*
 * A bundle read entry by entry as it is inflated, held to the same rules wherever it is read: by
 * the API as it receives it, by a worker as it extracts it. The inflated bytes are counted as they
 * come out of gzip (headers, padding and zero blocks too, so a tar of nothing but zeros counts),
 * and the count stops at the cap: nothing past it is inflated. An entry is a regular file or a
 * folder at a relative path without `..`; anything else (links, devices, FIFOs) is refused, never
 * written. Files and folders are counted as they are named (a folder implied by a file's path
 * counts too), and a bundle may not carry a package the service provides.
 */

/** Longest path of an entry, in bytes, and longest name of one of its folders or files. */
const MAX_PATH_BYTES = 1024;
const MAX_NAME_BYTES = 255;
/** Largest package.json read to check its name (the service's packages may not be named by one). */
const MAX_PACKAGE_JSON_BYTES = 1024 * 1024;

/** An entry that passed the rules: its path's parts (relative, no `.` or `..`), whether a folder, its mode. */
/** An entry's bytes, read in order (each entry's whole before the next). */
export type BundleContent = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

export interface BundleEntry {
  parts: string[];
  path: string;
  folder: boolean;
  /** Permission bits only (setuid, setgid and sticky dropped): 0644 or 0755 as packed. */
  mode: number;
  size: number;
}

const KINDS: Partial<Record<string, string>> = {
  symlink: 'a symbolic link',
  link: 'a hard link',
  'character-device': 'a character device',
  'block-device': 'a block device',
  fifo: 'a FIFO',
};

/** The forbidden package a path is in or names (`node_modules/playwright`, `…/node_modules/@playwright/test.js`), or null. */
export function providedPackageIn(parts: readonly string[]): string | null {
  const bare = (name: string | undefined) => (name ?? '').replace(/\..*$/, '');
  for (let i = 0; i < parts.length - 1; i++) {
    if (parts[i] !== 'node_modules') continue;
    const name = parts[i + 1] === '@playwright' ? `@playwright/${bare(parts[i + 2])}` : bare(parts[i + 1]);
    // A file `node_modules/playwright.js` is found by require('playwright') as the package would be.
    if (PROVIDED_PACKAGES.has(name)) return name;
  }
  return null;
}

function refuse(message: string): never {
  throw new BundleError('forbidden_entry', message);
}

/** The entry's path split into parts, or a refusal naming why it may not be written. */
function partsOf(header: Header): string[] {
  const name = header.name;
  const shown = JSON.stringify(name.slice(0, 200));
  if (Buffer.byteLength(name) > MAX_PATH_BYTES) refuse(`the path ${shown}… is longer than ${MAX_PATH_BYTES} bytes`);
  if (name.startsWith('/')) refuse(`${shown} is an absolute path`);
  if (/[\0\\]/.test(name)) refuse(`${shown} holds a NUL or a backslash`);
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) refuse(`${shown} climbs out of the bundle (..)`);
  if (parts.some((part) => Buffer.byteLength(part) > MAX_NAME_BYTES))
    refuse(`${shown} has a name longer than ${MAX_NAME_BYTES} bytes`);
  if (parts.length === 0) refuse(`${shown} names the bundle's root`);
  return parts;
}

/** Files and folders named so far: a path is one or the other, once. */
class Tally {
  private readonly folders = new Set<string>();
  private readonly files = new Set<string>();

  constructor(private readonly maxFiles: number) {}

  add(parts: string[], folder: boolean): void {
    for (let i = 1; i <= parts.length; i++) {
      const at = parts.slice(0, i).join('/');
      const last = i === parts.length;
      if (this.files.has(at)) refuse(`${JSON.stringify(at)} appears twice in the bundle`);
      if (last && !folder) {
        if (this.folders.has(at)) refuse(`${JSON.stringify(at)} is both a file and a folder`);
        this.files.add(at);
      } else if (!this.folders.has(at)) this.folders.add(at);
      else continue;
      if (this.files.size + this.folders.size > this.maxFiles)
        throw new BundleError('too_many_files', `the bundle holds more than ${this.maxFiles} files and folders`, {
          name: 'BUNDLE_LIMITS.maxFiles',
          value: this.maxFiles,
        });
    }
  }
}

/** Counts the inflated bytes that pass, failing past `max` (what follows is never inflated). */
function inflatedCap(max: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > max) return done(unpackedTooLarge(max));
      done(null, chunk);
    },
  });
}

function unpackedTooLarge(max: number): BundleError {
  return new BundleError('unpacked_too_large', `the bundle unpacks to more than ${max} bytes`, {
    name: 'BUNDLE_LIMITS.maxUnpackedBytes',
    value: max,
  });
}

/** A package.json's bytes, refused when it names a package the service provides. */
async function checkedPackageJson(entry: BundleEntry, content: BundleContent): Promise<Buffer> {
  if (entry.size > MAX_PACKAGE_JSON_BYTES)
    refuse(`${JSON.stringify(entry.path)} is larger than ${MAX_PACKAGE_JSON_BYTES} bytes`);
  const chunks: Buffer[] = [];
  for await (const chunk of content) chunks.push(Buffer.from(chunk));
  const bytes = Buffer.concat(chunks);
  let name: unknown;
  try {
    name = (JSON.parse(bytes.toString('utf8')) as { name?: unknown } | null)?.name;
  } catch {
    name = undefined;
  }
  // Node resolves a package's own name from inside it ("self-reference") before node_modules.
  if (typeof name === 'string' && PROVIDED_PACKAGES.has(name))
    throw new BundleError(
      'provided_package',
      `${JSON.stringify(entry.path)} names the package ${name}, which the service provides`,
    );
  return bytes;
}

/** The checked entry of a header (its file count taken), or a refusal. */
function entryOf(header: Header, tally: Tally, maxBytes: number): BundleEntry {
  const kind = KINDS[header.type];
  if (kind) refuse(`${JSON.stringify(header.name.slice(0, 200))} is ${kind}`);
  if (header.type !== 'file' && header.type !== 'contiguous-file' && header.type !== 'directory')
    refuse(`${JSON.stringify(header.name.slice(0, 200))} is of an unknown type (${JSON.stringify(header.type)})`);
  const parts = partsOf(header);
  const folder = header.type === 'directory';
  const forbidden = providedPackageIn(folder ? [...parts, ''] : parts);
  if (forbidden)
    throw new BundleError(
      'provided_package',
      `${JSON.stringify(parts.join('/'))} is in node_modules/${forbidden}, a package the service provides`,
    );
  tally.add(parts, folder);
  const size = folder ? 0 : header.size;
  // A file larger than the whole cap is refused on its header: its bytes are never inflated.
  if (size > maxBytes) throw unpackedTooLarge(maxBytes);
  return { parts, path: parts.join('/'), folder, mode: header.mode & 0o777, size };
}

/**
 * Reads the bundle's .tar.gz from `source`, calling `onEntry` with each entry that passes the rules
 * and its content (read it whole before the next); a {@link BundleError} for the first that does not,
 * or past a cap. A stream that is not a gzip'd tar is `invalid_format`.
 */
export async function walkBundle(
  source: Readable,
  caps: BundleCaps,
  onEntry: (entry: BundleEntry, content: BundleContent) => Promise<void>,
): Promise<void> {
  const tally = new Tally(caps.maxFiles);
  // What failed while an entry was handled (a refusal, or the disk full as it was written): given as it is.
  const failed: { error: Error | null } = { error: null };
  let handling: Promise<void> = Promise.resolve();
  const tar = extract();
  tar.on('entry', (header, source, next) => {
    // tar-stream's entries are streamx streams of buffers.
    const stream = source as typeof source & BundleContent;
    // Its error is the walk's own, which the pipeline below gives: destroyed with it, it has no other reader.
    stream.on('error', () => undefined);
    const handle = async () => {
      const entry = entryOf(header, tally, caps.maxUnpackedBytes);
      const content: BundleContent =
        !entry.folder && entry.parts.at(-1) === 'package.json' ? [await checkedPackageJson(entry, stream)] : stream;
      await onEntry(entry, content);
      // What onEntry left unread (a folder's nothing, say) is drained.
      stream.resume();
    };
    handling = handle().then(
      () => next(),
      (error: unknown) => {
        failed.error ??= error as Error;
        stream.resume();
        next(error as Error);
      },
    );
  });
  try {
    await pipeline(source, createGunzip(), inflatedCap(caps.maxUnpackedBytes), tar);
  } catch (error) {
    // The entry's own failure may reach the pipeline first, as the close of the entry it was reading.
    await handling;
    if (failed.error) throw failed.error;
    if (error instanceof BundleError) throw error;
    throw new BundleError('invalid_format', `the body is not a gzip'd tar (${(error as Error).message})`);
  }
}
