import { execFile, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { dropPrivileges, namespaceArgs } from './bwrap-args';
import type { CgroupDriver } from './cgroups';
import { detectCgroups } from './cgroups-detect';
import { PERL } from './close-fds';
import { mountScratch, sweepStaleScratch, unmountScratch } from './scratch';
import { seccompFilter, seccompUnsupported } from './seccomp';
import { feedDescriptor } from './supervise';

/** Whether this machine can run the sandbox, and if not, why. */
export type SandboxSupport = { ok: true; bwrap: string; cgroups: CgroupDriver } | { ok: false; reason: string };

function findExecutable(name: string, dirs: readonly string[]): string | undefined {
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; the next directory.
    }
  }
  return undefined;
}

function firstLine(error: unknown): string {
  const stderr = typeof error === 'object' && error !== null && 'stderr' in error ? String(error.stderr) : '';
  return stderr.trim().split('\n')[0] || (error instanceof Error ? error.message : String(error));
}

/**
 * bubblewrap makes every namespace the sandbox uses and the program becomes a user of its own
 * inside, or why not (a container without the privilege, a seccomp or AppArmor profile refusing it).
 */
async function probeBwrap(bwrap: string): Promise<string | undefined> {
  try {
    await promisify(execFile)(bwrap, [...namespaceArgs(), '--ro-bind', '/', '/', '--', '/bin/true'], {
      timeout: 10_000,
      env: {},
    });
  } catch (error) {
    return `${bwrap} cannot create the namespaces (${firstLine(error)})`;
  }
  try {
    const drop = dropPrivileges(1_000_000, 1_000_000);
    await promisify(execFile)(bwrap, [...namespaceArgs(), '--ro-bind', '/', '/', '--', ...drop, '/bin/true'], {
      timeout: 10_000,
      env: {},
    });
    return undefined;
  } catch (error) {
    return `the program cannot be made an unprivileged user inside the sandbox with /usr/bin/setpriv (${firstLine(error)})`;
  }
}

/** bubblewrap runs `command` with the filter on descriptor 3: its exit code and stderr's first line. */
function runWithFilter(bwrap: string, command: readonly string[]): Promise<{ code: number | null; said: string }> {
  return new Promise((resolve) => {
    const args = [...namespaceArgs(), '--ro-bind', '/', '/', '--seccomp', '3', '--', ...command];
    const child = spawn(bwrap, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe'], env: {}, timeout: 10_000 });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    feedDescriptor(child, 3, seccompFilter());
    child.on('error', (error) => resolve({ code: null, said: error.message }));
    child.on('close', (code) => resolve({ code, said: stderr.trim().split('\n')[0] ?? '' }));
  });
}

/** bubblewrap loads the sandbox's seccomp filter (seccomp.ts), and it holds for the program, or why not. */
async function probeSeccomp(bwrap: string): Promise<string | undefined> {
  const unsupported = seccompUnsupported();
  if (unsupported !== undefined) return unsupported;
  const drop = dropPrivileges(1_000_000, 1_000_000);
  const status = ['/bin/grep', '-qE', '^Seccomp:[[:space:]]+2$', '/proc/self/status'];
  const { code, said } = await runWithFilter(bwrap, [...drop, ...status]);
  if (code === 0) return undefined;
  return said
    ? `${bwrap} cannot load the sandbox's seccomp filter (${said})`
    : `the sandbox's seccomp filter is not in force for the program (its /proc/self/status does not say Seccomp: 2)`;
}

/** A tmpfs can be mounted for the scratch quota; removes the quota mounts of workers that are gone first. */
async function probeScratch(): Promise<string | undefined> {
  await sweepStaleScratch();
  const dir = await mkdtemp(path.join(tmpdir(), 'testrun-scratch-probe-'));
  try {
    await mountScratch(dir, 1024 * 1024);
    await unmountScratch(dir);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await rmdir(dir).catch(() => undefined);
  }
}

async function detect(): Promise<SandboxSupport> {
  const uid = process.getuid?.();
  if (uid !== 0)
    return {
      ok: false,
      reason: `the worker runs as uid ${uid ?? 'unknown'}, and the sandbox needs root (uid 0) to create cgroups, mount the scratch quota and run tenant code as a user of its own`,
    };
  const bwrap = findExecutable('bwrap', ['/usr/bin', '/usr/local/bin', '/bin']);
  if (bwrap === undefined) return { ok: false, reason: 'bwrap (bubblewrap) is not installed' };
  if (findExecutable('setpriv', ['/usr/bin']) === undefined)
    return { ok: false, reason: '/usr/bin/setpriv (util-linux) is not installed' };
  if (findExecutable(path.basename(PERL), [path.dirname(PERL)]) === undefined)
    return { ok: false, reason: `${PERL} (perl-base) is not installed` };
  const failure = (await probeBwrap(bwrap)) ?? (await probeSeccomp(bwrap)) ?? (await probeScratch());
  if (failure !== undefined) return { ok: false, reason: failure };
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
 * Why the sandbox cannot run here (not root, no bubblewrap, setpriv or perl, namespaces refused, the
 * seccomp filter not loaded (an architecture it has no table for), no
 * scratch tmpfs, no usable cgroup controllers (v1 or v2), the worker's cgroup not delegated to it, not
 * permitted to create groups), or null when it can:
 * for the worker to report at start-up.
 */
export async function checkSandboxSupport(): Promise<string | null> {
  const support = await sandboxSupport();
  return support.ok ? null : support.reason;
}
