import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closingOthers } from './close-fds';
import type { SandboxResult, SandboxSpec } from './run-sandboxed';
import { superviseChild } from './supervise';

/**
 * Runs `spec.command` WITHOUT a sandbox (PLAYWRIGHT_SANDBOX=off, docs/SANDBOX.md, "Opting out"):
 * a child of the worker in a process group of its own, in the scratch directory, with the spec's
 * environment only (nothing of the worker's) and no descriptor of the worker's but stdio
 * (closingOthers), its wall clock and output capped, the whole group killed when it ends, is
 * stopped or goes past a cap. Nothing else is isolated: no namespaces, no
 * cgroups, no user of its own, no network but what the program is told to use.
 */
export async function runUnsandboxed(
  spec: Pick<SandboxSpec, 'command' | 'args' | 'scratchDir' | 'env' | 'limits' | 'signal'>,
): Promise<SandboxResult> {
  const [perl, ...args] = closingOthers(2, [spec.command, ...spec.args]) as [string, ...string[]];
  const child = spawn(perl, args, {
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
  // What the program left running (a browser, a child it forked) goes with it.
  const ending = await superviseChild(child, { limits: spec.limits, signal: spec.signal, kill: killGroup }).finally(
    killGroup,
  );
  return { id: `unsandboxed-${randomUUID()}`, ...ending };
}
