import { watch, type FSWatcher } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { openScratchFile } from '../../../sandbox';
import { MAX_LINE_BYTES, type OversizedRecord } from '../inside/protocol';

/** How much of a line over the cap is kept, to tell whose it was (the reporter writes the test's identity first: inside/protocol.ts). */
const HEAD_BYTES = 64 * 1024;
/**
 * The least time between two reads a change of the file's directory wakes: a test that churns that
 * directory (it is the sandbox's to write) makes the worker read at most this often.
 */
const MIN_WAKE_MS = 20;
/** How often the file is read besides, while the directory is watched (its changes wake reads). */
const WATCHED_INTERVAL_MS = 1_000;

/**
 * Reads the lines appended to a file as they come (the reporter in the sandbox writes them): the
 * file `relative` of the scratch directory `root`. The file and its folders are the sandbox's to
 * replace, while it runs: only a regular file is read, through no link in any folder and on the
 * scratch directory's own file system (openScratchFile), and opening it never blocks (a FIFO would
 * hold the read, and the run, forever). A line longer than
 * `maxLineBytes` is not held: its bytes are dropped as they come, and `onLine` gets an
 * {@link OversizedRecord} (as JSON) in its place.
 *
 * A change of the file's directory wakes a read at once (so a test's result is recorded, and its
 * verdict known, as soon as the reporter wrote it), and the file is read every `intervalMs` besides
 * (every second at most where the directory is watched). A read that finds the file no longer than
 * what was read costs one open and fstat: most reads find nothing new.
 */
export class LineTail {
  private offset = 0;
  /** The line being read: its bytes so far, or (over the cap) its head and length only. */
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped: { head: string } | null = null;
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> = Promise.resolve();
  private watcher: FSWatcher | undefined;
  private woken: NodeJS.Timeout | undefined;
  private lastRead = 0;

  constructor(
    private readonly root: string,
    private readonly relative: string,
    private readonly onLine: (line: string) => void,
    private readonly intervalMs = 200,
    private readonly maxLineBytes = MAX_LINE_BYTES,
  ) {}

  start(): void {
    try {
      this.watcher = watch(path.dirname(path.join(this.root, this.relative)), { persistent: false }, () => this.wake());
      this.watcher.on('error', () => this.unwatch());
    } catch {
      // No watch (the directory is not there yet, or no inotify): the interval reads.
    }
    const every = this.watcher ? Math.max(this.intervalMs, WATCHED_INTERVAL_MS) : this.intervalMs;
    this.timer = setInterval(() => this.readNext(), every);
  }

  /** The watch failed (its directory went, say): it is closed, and the interval reads every `intervalMs` again. */
  private unwatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = setInterval(() => this.readNext(), this.intervalMs);
  }

  /** Stops polling and reads what is left (a last line without its newline included). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    clearTimeout(this.woken);
    this.woken = undefined;
    this.watcher?.close();
    await this.reading;
    await this.read();
    this.endLine();
  }

  /** Reads next, after the read in progress. */
  private readNext(): void {
    this.lastRead = Date.now();
    // A failed read is retried at the next one; it must not become an unhandled rejection.
    this.reading = this.reading.then(() => this.read()).catch(() => {});
  }

  /** A change in the directory: a read soon, one at a time and at most every MIN_WAKE_MS. */
  private wake(): void {
    if (this.woken !== undefined || this.timer === undefined) return;
    const wait = Math.max(0, this.lastRead + MIN_WAKE_MS - Date.now());
    this.woken = setTimeout(() => {
      this.woken = undefined;
      this.readNext();
    }, wait);
  }

  private async read(): Promise<void> {
    let handle: FileHandle;
    try {
      handle = await openScratchFile(this.root, this.relative);
    } catch {
      return; // not written yet, or not a plain file of the scratch directory's
    }
    try {
      if ((await handle.stat()).size <= this.offset) return;
      for (;;) {
        const buffer = Buffer.alloc(64 * 1024);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.offset);
        if (bytesRead === 0) break;
        this.offset += bytesRead;
        this.take(buffer.subarray(0, bytesRead));
      }
    } finally {
      await handle.close();
    }
  }

  /** Splits bytes at newlines (a byte of its own in UTF-8, never inside a character). */
  private take(data: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = data.indexOf(0x0a, start);
      this.append(data.subarray(start, newline === -1 ? data.length : newline));
      if (newline === -1) return;
      this.endLine();
      start = newline + 1;
    }
  }

  private append(part: Buffer): void {
    if (part.length === 0) return;
    this.size += part.length;
    if (this.dropped) return;
    if (this.size <= this.maxLineBytes) {
      this.chunks.push(part);
      return;
    }
    const head = Buffer.concat([...this.chunks, part], Math.min(HEAD_BYTES, this.size));
    this.dropped = { head: head.toString('utf8') };
    this.chunks = [];
  }

  private endLine(): void {
    if (this.dropped) {
      const line: OversizedRecord = { type: 'oversized', bytes: this.size, head: this.dropped.head };
      this.onLine(JSON.stringify(line));
    } else if (this.size > 0) {
      const text = Buffer.concat(this.chunks).toString('utf8');
      if (text.trim() !== '') this.onLine(text);
    }
    this.chunks = [];
    this.size = 0;
    this.dropped = null;
  }
}
