import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

/**
 * Reads the lines appended to a file as they come (the reporter in the sandbox writes them). The
 * file is the sandbox's to replace: only a regular file is read, never through a symlink, and
 * opening it never blocks (a FIFO would hold the read, and the run, forever).
 */
export class LineTail {
  private offset = 0;
  private rest = '';
  private readonly decoder = new StringDecoder('utf8');
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly onLine: (line: string) => void,
    private readonly intervalMs = 200,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      // A failed read is retried at the next tick; it must not become an unhandled rejection.
      this.reading = this.reading.then(() => this.read()).catch(() => {});
    }, this.intervalMs);
  }

  /** Stops polling and reads what is left. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.reading;
    await this.read();
    if (this.rest.trim() !== '') this.onLine(this.rest);
    this.rest = '';
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
        this.rest += this.decoder.write(buffer.subarray(0, bytesRead));
        const lines = this.rest.split('\n');
        this.rest = lines.pop() ?? '';
        for (const line of lines) if (line.trim() !== '') this.onLine(line);
      }
    } finally {
      await handle.close();
    }
  }
}
