import type { ChildProcess } from 'node:child_process';

/** A limit that ended a program: its groups' (memory, pids), the wall clock, its output, the scratch quota. */
export type SandboxLimit = 'memory' | 'pids' | 'time' | 'output' | 'disk';

/** How a supervised program ended: its exit, the limit that ended it, and the start of its output. */
export interface ChildEnding {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  limit: SandboxLimit | null;
  /** True when the caller's signal stopped it. */
  aborted: boolean;
  /** Up to `outputBytes` of each. */
  stdout: string;
  stderr: string;
}

/**
 * Writes `bytes` to the child's descriptor `fd` (a pipe of its stdio) and closes it: what bubblewrap
 * reads its flags, environment or seccomp filter from. A program that never starts leaves the pipe
 * unread, which is no error of the worker's.
 */
export function feedDescriptor(child: ChildProcess, fd: number, bytes: Buffer): void {
  const pipe = child.stdio[fd];
  if (!pipe || !('end' in pipe)) return;
  pipe.on('error', () => {});
  pipe.end(bytes);
}

/** Keeps the first `cap` bytes of a stream. */
class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    const room = this.cap - this.kept;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/**
 * Watches a started program (its stdout and stderr piped) until it closes: past `wallMs`, past
 * `outputBytes` of output (both streams together) or when `signal` aborts, `kill` stops it. A limit
 * its groups report (`limitHit`: memory, pids) explains an end better than the time or output that
 * followed, and names the limit of a program that ended on its own after reaching one.
 */
export function superviseChild(
  child: ChildProcess,
  options: {
    limits: { wallMs: number; outputBytes: number };
    signal?: AbortSignal;
    kill: () => void;
    limitHit?: () => SandboxLimit | null;
  },
): Promise<ChildEnding> {
  const { limits, signal, kill } = options;
  const limitHit = options.limitHit ?? (() => null);
  const stdout = new CappedBuffer(limits.outputBytes);
  const stderr = new CappedBuffer(limits.outputBytes);
  let outputSeen = 0;
  let limit: SandboxLimit | null = null;
  let aborted = false;
  const stop = (why: SandboxLimit | 'abort') => {
    if (why === 'abort') aborted = true;
    else limit ??= limitHit() ?? why;
    kill();
  };
  const onOutput = (buffer: CappedBuffer) => (chunk: Buffer) => {
    buffer.push(chunk);
    outputSeen += chunk.length;
    if (outputSeen > limits.outputBytes) stop('output');
  };
  child.stdout?.on('data', onOutput(stdout));
  child.stderr?.on('data', onOutput(stderr));
  const timer = setTimeout(() => stop('time'), limits.wallMs);
  const onAbort = () => stop('abort');
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const done = () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  };
  return new Promise((resolve, reject) => {
    child.on('error', (error) => {
      done();
      reject(error);
    });
    child.on('close', (exitCode, exitSignal) => {
      done();
      if (!aborted) limit ??= limitHit();
      resolve({ exitCode, signal: exitSignal, limit, aborted, stdout: stdout.text(), stderr: stderr.text() });
    });
  });
}
