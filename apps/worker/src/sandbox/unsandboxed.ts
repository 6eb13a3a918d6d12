import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { CappedBuffer, type SandboxResult, type SandboxSpec } from './run-sandboxed';

/**
 * Runs `spec.command` WITHOUT a sandbox (PLAYWRIGHT_SANDBOX=off, docs/SANDBOX.md, "Opting out"):
 * a child of the worker in a process group of its own, in the scratch directory, with the spec's
 * environment only (nothing of the worker's), its wall clock and output capped, the whole group
 * killed when it ends, is stopped or goes past a cap. Nothing else is isolated: no namespaces, no
 * cgroups, no user of its own, no network but what the program is told to use.
 */
export function runUnsandboxed(
  spec: Pick<SandboxSpec, 'command' | 'args' | 'scratchDir' | 'env' | 'limits' | 'signal'>,
): Promise<SandboxResult> {
  const { limits } = spec;
  const stdout = new CappedBuffer(limits.outputBytes);
  const stderr = new CappedBuffer(limits.outputBytes);
  let outputSeen = 0;
  let limit: SandboxResult['limit'] = null;
  let aborted = false;
  const child = spawn(spec.command, spec.args, {
    cwd: spec.scratchDir,
    env: { ...spec.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group is gone.
    }
  };
  const stop = (why: 'time' | 'output' | 'abort') => {
    if (why === 'abort') aborted = true;
    else limit ??= why;
    killGroup();
  };
  const onOutput = (buffer: CappedBuffer) => (chunk: Buffer) => {
    buffer.push(chunk);
    outputSeen += chunk.length;
    if (outputSeen > limits.outputBytes) stop('output');
  };
  child.stdout.on('data', onOutput(stdout));
  child.stderr.on('data', onOutput(stderr));
  const timer = setTimeout(() => stop('time'), limits.wallMs);
  const onAbort = () => stop('abort');
  if (spec.signal?.aborted) onAbort();
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
      // What the program left running (a browser, a child it forked) goes with it.
      killGroup();
    };
    child.on('error', (error) => {
      done();
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      done();
      resolve({
        id: `unsandboxed-${randomUUID()}`,
        exitCode,
        signal,
        limit,
        aborted,
        stdout: stdout.text(),
        stderr: stderr.text(),
      });
    });
  });
}
