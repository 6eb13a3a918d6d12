import { open, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

/** Reads the lines appended to a file as they come (the reporter in the sandbox writes them). */
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
      this.reading = this.reading.then(() => this.read());
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
      handle = await open(this.file, 'r');
    } catch {
      return; // not written yet
    }
    try {
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
