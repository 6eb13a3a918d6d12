import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { detectCgroups, type CgroupDriver } from './cgroups';

/** Whether this machine can run the sandbox, and if not, why. */
export type SandboxSupport = { ok: true; bwrap: string; cgroups: CgroupDriver } | { ok: false; reason: string };

function findBwrap(): string | undefined {
  for (const dir of ['/usr/bin', '/usr/local/bin', '/bin']) {
    const candidate = path.join(dir, 'bwrap');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; the next directory.
    }
  }
  return undefined;
}

/** bubblewrap makes every namespace the sandbox uses, or says why not (a container without the privilege). */
async function probeBwrap(bwrap: string): Promise<string | undefined> {
  try {
    await promisify(execFile)(
      bwrap,
      ['--unshare-all', '--die-with-parent', '--cap-drop', 'ALL', '--ro-bind', '/', '/', '--', '/bin/sh', '-c', ':'],
      { timeout: 10_000, env: {} },
    );
    return undefined;
  } catch (error) {
    const stderr = typeof error === 'object' && error !== null && 'stderr' in error ? String(error.stderr) : '';
    return stderr.trim().split('\n')[0] || (error instanceof Error ? error.message : String(error));
  }
}

async function detect(): Promise<SandboxSupport> {
  const bwrap = findBwrap();
  if (bwrap === undefined) return { ok: false, reason: 'bwrap (bubblewrap) is not installed' };
  const failure = await probeBwrap(bwrap);
  if (failure !== undefined) return { ok: false, reason: `${bwrap} cannot create the namespaces (${failure})` };
  const cgroups = await detectCgroups();
  if ('reason' in cgroups) return { ok: false, reason: cgroups.reason };
  return { ok: true, bwrap, cgroups: cgroups.driver };
}

let detected: Promise<SandboxSupport> | undefined;

/** The machine's support, probed once per process (bubblewrap and cgroups do not come and go). */
export function sandboxSupport(): Promise<SandboxSupport> {
  detected ??= detect();
  return detected;
}

/**
 * Why the sandbox cannot run here (no bubblewrap, no namespaces, no usable cgroup controllers, not
 * permitted to create groups), or null when it can: for the worker to report at start-up.
 */
export async function checkSandboxSupport(): Promise<string | null> {
  const support = await sandboxSupport();
  return support.ok ? null : support.reason;
}
