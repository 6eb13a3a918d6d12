import { constants, type Dirent, type Stats } from 'node:fs';
import { lstat, open, readdir, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/*
 * Reading what a sandbox left, as root, without ever following a path the tenant controls.
 *
 * Every folder and file the program could write is the tenant's: any of them may be a symlink, a
 * FIFO, a hard link, or a folder swapped for a symlink between a check and a use (the program may
 * still be running, renaming folders in a loop). So a path is never resolved by name from the top:
 * the scratch directory (a mount point the program cannot replace) is opened once, and each
 * component after it is opened relative to the descriptor of the folder before it
 * (`/proc/self/fd/<folder>/<name>`, which resolves `<name>` in that very folder, as openat(2) does),
 * with O_NOFOLLOW, so a symlink in any position is refused instead of followed. Every folder and the
 * file must be on the scratch directory's own file system (its tmpfs: the tenant's own bytes and
 * nothing else), the file a regular file with one link. A race can then only choose among the
 * tenant's own files.
 */

/** Why something the program left was not read: a sentence fit for the run's notes. */
export class ScratchPathError extends Error {
  constructor(
    readonly relative: string,
    readonly reason: string,
  ) {
    super(`${relative} in the scratch directory ${reason}`);
    this.name = 'ScratchPathError';
  }
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** What a file that is not a regular file is, in words. */
function kindOf(stat: Stats): string {
  if (stat.isSymbolicLink()) return 'is a symbolic link';
  if (stat.isFIFO()) return 'is a FIFO';
  if (stat.isSocket()) return 'is a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'is a device';
  if (stat.isDirectory()) return 'is a folder';
  return 'is not a regular file';
}

/** The components of `relative`; a path that is absolute or climbs (`..`) is refused. */
function componentsOf(relative: string): string[] {
  if (relative.includes('\0')) throw new ScratchPathError(relative, 'is not a valid path');
  if (path.posix.isAbsolute(relative)) throw new ScratchPathError(relative, 'is outside the scratch directory');
  const parts = relative.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) throw new ScratchPathError(relative, 'is outside the scratch directory');
  if (parts.length === 0) throw new ScratchPathError(relative, 'names no file');
  return parts;
}

/** A name in the folder open as `folder`, resolved in that folder (never by a path from the top). */
function inFolder(folder: FileHandle, name: string): string {
  return `/proc/self/fd/${folder.fd}/${name}`;
}

/** Why opening `name` in `folder` failed, from what is there (lstat does not follow it). */
async function refusal(folder: FileHandle, name: string, error: unknown, relative: string): Promise<Error> {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return error as Error;
  const seen = await lstat(inFolder(folder, name)).catch(() => null);
  if (seen && !seen.isFile() && !seen.isDirectory()) return new ScratchPathError(relative, kindOf(seen));
  if (seen?.isFile() && code === 'ENOTDIR') return new ScratchPathError(relative, 'has a file where a folder is');
  return error as Error;
}

/**
 * Opens the folder `relative` (every component a real folder, none through a link, on the scratch
 * directory's file system) and calls `use` with it; `''` is the scratch directory itself.
 */
async function withFolder<T>(
  root: string,
  relative: string,
  use: (folder: FileHandle, device: number) => Promise<T>,
  named = relative,
): Promise<T> {
  let folder = await open(root, DIR_FLAGS);
  try {
    const device = (await folder.stat()).dev;
    for (const name of relative === '' ? [] : componentsOf(relative)) {
      const next = await open(inFolder(folder, name), DIR_FLAGS).catch(async (error: unknown) => {
        throw await refusal(folder, name, error, named);
      });
      await folder.close();
      folder = next;
      if ((await folder.stat()).dev !== device)
        throw new ScratchPathError(named, 'is on another file system than the scratch directory');
    }
    return await use(folder, device);
  } finally {
    await folder.close().catch(() => undefined);
  }
}

/**
 * Opens the regular file `relative` of the scratch directory `root` for reading, through no link
 * in any component, on the scratch directory's file system, with one link; throws a
 * {@link ScratchPathError} saying why not (ENOENT as it is, for a file not written yet).
 */
export async function openScratchFile(root: string, relative: string): Promise<FileHandle> {
  const parts = componentsOf(relative);
  const name = parts.pop() as string;
  return withFolder(
    root,
    parts.join('/'),
    async (folder, device) => {
      const handle = await open(inFolder(folder, name), FILE_FLAGS).catch(async (error: unknown) => {
        throw await refusal(folder, name, error, relative);
      });
      try {
        const stat = await handle.stat();
        if (!stat.isFile()) throw new ScratchPathError(relative, kindOf(stat));
        if (stat.dev !== device)
          throw new ScratchPathError(relative, 'is on another file system than the scratch directory');
        if (stat.nlink > 1) throw new ScratchPathError(relative, 'is a hard link');
        return handle;
      } catch (error) {
        await handle.close();
        throw error;
      }
    },
    relative,
  );
}

/**
 * The bytes of the regular file `relative` of the scratch directory `root` ({@link openScratchFile}),
 * at most `maxBytes`: a larger file (or one that grows past it while read) is refused.
 */
export async function readScratchFile(root: string, relative: string, maxBytes: number): Promise<Buffer> {
  const handle = await openScratchFile(root, relative);
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) throw new ScratchPathError(relative, `is over ${maxBytes} bytes`);
    const buffer = Buffer.alloc(size + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > size) throw new ScratchPathError(relative, 'grew while it was read');
    }
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}

/** The entries of the folder `relative` of the scratch directory `root` (as {@link openScratchFile} reaches it). */
export async function listScratchDir(root: string, relative: string): Promise<Dirent[]> {
  return withFolder(root, relative, (folder) => readdir(inFolder(folder, '.'), { withFileTypes: true }));
}
