import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/**
 * The longest line the worker holds: a test's result is one line, and the team's code decides
 * its size (step titles, annotations, error messages; the reporter cuts stdout and stderr to
 * 256 Ki characters each). A plain result is kilobytes, a long test's steps some hundreds.
 */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;
/** How much of a line over the cap is kept, to tell whose it was (the reporter writes the test's identity first). */
const HEAD_BYTES = 64 * 1024;

/** What a line over the cap becomes: the reporter's line type the collector reads it as. */
export interface OversizedLine {
  type: 'oversized';
  /** Its length in bytes (over `maxLineBytes`). */
  bytes: number;
  /** Its first bytes. */
  head: string;
}

/**
 * Reads the lines appended to a file as they come (the reporter in the sandbox writes them). The
 * file is the sandbox's to replace: only a regular file is read, never through a symlink, and
 * opening it never blocks (a FIFO would hold the read, and the run, forever). A line longer than
 * `maxLineBytes` is not held: its bytes are dropped as they come, and `onLine` gets an
 * {@link OversizedLine} (as JSON) in its place.
 */
export class LineTail {
  private offset = 0;
  /** The line being read: its bytes so far, or (over the cap) its head and length only. */
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped: { head: string } | null = null;
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly onLine: (line: string) => void,
    private readonly intervalMs = 200,
    private readonly maxLineBytes = MAX_LINE_BYTES,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      // A failed read is retried at the next tick; it must not become an unhandled rejection.
      this.reading = this.reading.then(() => this.read()).catch(() => {});
    }, this.intervalMs);
  }

  /** Stops polling and reads what is left (a last line without its newline included). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.reading;
    await this.read();
    this.endLine();
  }

  private async read(): Promise<void> {
    let handle: FileHandle;
    try {
      handle = await open(this.file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch {
      return; // not written yet, or a symlink
    }
    try {
      if (!(await handle.stat()).isFile()) return;
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
      const line: OversizedLine = { type: 'oversized', bytes: this.size, head: this.dropped.head };
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
