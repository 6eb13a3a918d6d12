import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { bwrapArgs, descriptorArgs, dropPrivileges, ENV_ARGS_FD, SECCOMP_FD } from './bwrap-args';
import type { SandboxCgroup } from './cgroups';
import { closingOthers } from './close-fds';
import { seccompFilter } from './seccomp';
import { prepareScratch, scratchFull } from './scratch';
import { shareCopy } from './share';
import { sandboxSupport } from './support';
import { feedDescriptor, superviseChild, type ChildEnding } from './supervise';

/** What bounds one sandboxed program. */
export interface SandboxLimits {
  /** Memory of every process in the sandbox together, /tmp included (it is a tmpfs). */
  memoryBytes: number;
  /** Processes and threads at once. */
  pids: number;
  /** Cores, as a CFS quota (0.5 = half a core, 2 = two cores). */
  cpuQuota: number;
  /** Wall-clock time before it is killed. */
  wallMs: number;
  /** stdout and stderr together; past it the sandbox is killed. */
  outputBytes: number;
  /** Size of /tmp (default 16 MiB). */
  tmpBytes?: number;
  /** Size of /dev/shm (default: as /tmp). */
  shmBytes?: number;
  /**
   * The scratch directory's quota, for the caller's `mountScratch` (scratch.ts): runSandboxed does not
   * mount it (the caller fills the directory before and reads it after), it only reports a program
   * that ended with its scratch tmpfs full as limit `disk`.
   */
  scratchBytes?: number;
}

export interface SandboxSpec {
  /** The program, as a path inside the sandbox (e.g. /usr/bin/node). */
  command: string;
  args: readonly string[];
  /** Host directories bound read-only at the same path. */
  readOnlyBinds: readonly string[];
  /**
   * Host paths bound read-only at another path inside (`to` must not be under /work): copies in the
   * share (`shareCopy`, share.ts), or their paths on the host show in the sandbox's /proc/self/mountinfo.
   */
  readOnlyMounts?: readonly { from: string; to: string }[];
  /**
   * A private writable directory of the host, the sandbox's /work and working directory; given to
   * the sandbox's user before it starts (with what the caller put there). Bound it with
   * `mountScratch` (scratch.ts).
   */
  scratchDir: string;
  /** The program's whole environment: nothing of the worker's is passed on. */
  env: Readonly<Record<string, string>>;
  limits: SandboxLimits;
  /**
   * 'none': loopback only, no way out. Or the egress proxy's Unix socket: a relay on the sandbox's
   * 127.0.0.1:`port` carries connections to it, the only way out (HTTP_PROXY for the program to set).
   * Make it in a folder of the share (`shareFolder`, share.ts): its path within its file system shows inside.
   */
  network: 'none' | { proxySocketPath: string; port: number };
  /** Aborting kills the sandbox. */
  signal?: AbortSignal;
}

export interface SandboxResult extends ChildEnding {
  /** The sandbox's name, as its cgroups are named (`testrun-sandbox/<id>` under each controller). */
  id: string;
  peakMemoryBytes?: number;
  /** The host uid (and gid) the program ran as: what owns the files it left in the scratch directory. */
  uid?: number;
}

const DEFAULT_TMP_BYTES = 16 * 1024 * 1024;

/**
 * The relay Chromium's namespace uses too (network/netns-relay.ts), as built JavaScript (also when
 * the worker runs from its sources under jest): copied alone into the share (share.ts), bound read-only with its folder.
 */
const RELAY_SCRIPT = path.resolve(__dirname, '../../dist/network/netns-relay.js');
/** Where the relay and the proxy's socket appear inside the sandbox. */
const INSIDE_RELAY_DIR = '/run/testrun/relay';
const PROXY_SOCKET = '/run/testrun/egress.sock';

/**
 * The host uids the programs run as: one per sandbox, out of every range a distribution gives people
 * or services (and container user-namespace ranges start at 100000), varied by the worker's pid so
 * two workers on a machine rarely share one. No /etc/passwd entry is needed.
 */
const UID_BASE = 1_000_000;
let uids = (process.pid % 1000) * 1000;
function nextUid(): number {
  uids = (uids + 1) % 1_000_000;
  return UID_BASE + uids;
}

/** The program's command line inside the sandbox, and what must be bound for it. */
async function programCommand(spec: SandboxSpec, uid: number): Promise<{ command: string[]; mounts: string[] }> {
  const program = [...dropPrivileges(uid, uid), spec.command, ...spec.args];
  if (spec.network === 'none') return { command: program, mounts: [] };
  if (!existsSync(RELAY_SCRIPT)) throw new Error(`${RELAY_SCRIPT} is missing (build the worker)`);
  const relayDir = path.dirname(await shareCopy(`relay/${path.basename(RELAY_SCRIPT)}`, RELAY_SCRIPT));
  return {
    command: [
      process.execPath,
      path.join(INSIDE_RELAY_DIR, path.basename(RELAY_SCRIPT)),
      PROXY_SOCKET,
      String(spec.network.port),
      '-', // no descriptors beyond stdio
      ...program,
    ],
    mounts: ['--ro-bind', relayDir, INSIDE_RELAY_DIR, '--bind', spec.network.proxySocketPath, PROXY_SOCKET],
  };
}

/**
 * Enters every cgroup, then becomes bubblewrap through {@link closingOthers}, with no descriptor but
 * stdio, the environment's and the seccomp filter's: the program is inside its limits before it
 * runs (`sh -c TRAMPOLINE sh <n> <procs files...> perl ... <bwrap> <args...>`).
 */
const TRAMPOLINE =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || { echo "sandbox: cannot enter $1" >&2; exit 125; }; shift; n=$((n-1)); done; exec "$@"';

/** The groups of each sandbox while it runs, by its scratch directory ({@link groupLimitNow}). */
const running = new Map<string, SandboxCgroup>();
/**
 * The limit each of the latest sandboxes to end had reached, by scratch directory: the caller reads
 * what the program wrote last after its groups are gone (a result line read once the sandbox ended).
 */
const ended = new Map<string, 'memory' | 'pids' | null>();
/** How many ended sandboxes {@link ended} remembers: far more than end at once on one worker. */
const ENDED_KEPT = 256;

/**
 * The limit a sandbox's groups have enforced so far (a memory OOM, a fork refused at `pids`), for a
 * caller that attributes it before the program ends or just after: while it runs in `scratchDir`,
 * or as it was when it ended there. Null when none was reached, or no sandbox ran there.
 */
export function groupLimitNow(scratchDir: string): 'memory' | 'pids' | null {
  const dir = path.resolve(scratchDir);
  return running.get(dir)?.limitHit() ?? ended.get(dir) ?? null;
}

/** Remembers the limit the sandbox in `dir` ended with, forgetting the oldest beyond {@link ENDED_KEPT}. */
function rememberEnded(dir: string, limit: 'memory' | 'pids' | null): void {
  ended.delete(dir);
  ended.set(dir, limit);
  for (const oldest of ended.keys()) {
    if (ended.size <= ENDED_KEPT) break;
    ended.delete(oldest);
  }
}

/**
 * Runs `spec.command` in a new sandbox (bubblewrap namespaces, cgroup limits) and resolves when it
 * and everything it started are gone and its groups removed. Throws when the machine cannot
 * sandbox ({@link checkSandboxSupport} says why), never because of what the program did.
 */
export async function runSandboxed(spec: SandboxSpec): Promise<SandboxResult> {
  const support = await sandboxSupport();
  if (!support.ok) throw new Error(`the sandbox cannot run: ${support.reason}`);
  const uid = nextUid();
  const program = await programCommand(spec, uid);
  const tmpBytes = spec.limits.tmpBytes ?? DEFAULT_TMP_BYTES;
  const args = bwrapArgs({
    readOnlyBinds: spec.readOnlyBinds,
    mounts: [...(spec.readOnlyMounts ?? []).flatMap(({ from, to }) => ['--ro-bind', from, to]), ...program.mounts],
    scratchDir: spec.scratchDir,
    tmpBytes,
    shmBytes: spec.limits.shmBytes ?? tmpBytes,
  });
  await prepareScratch(spec.scratchDir, uid, uid);
  // The worker's pid in the name lets a later worker remove the groups this one leaves if it is killed.
  const id = `sbx-${process.pid}-${randomUUID()}`;
  const cgroup = await support.cgroups.create(id, spec.limits);
  const dir = path.resolve(spec.scratchDir);
  running.set(dir, cgroup);
  try {
    const command = closingOthers(SECCOMP_FD, [support.bwrap, '--args', String(ENV_ARGS_FD), '--', ...program.command]);
    const result = await supervise(spec, id, cgroup, command, descriptorArgs(args, spec.env));
    // ENOSPC in the scratch directory that ended the program: the scratch quota was its limit.
    const failed = result.exitCode !== 0 || result.signal !== null;
    if (failed && result.limit === null && !result.aborted && (await scratchFull(spec.scratchDir)))
      result.limit = 'disk';
    return { ...result, uid };
  } finally {
    rememberEnded(dir, cgroup.limitHit());
    running.delete(dir);
    await cgroup.destroy();
  }
}

async function supervise(
  spec: SandboxSpec,
  id: string,
  cgroup: SandboxCgroup,
  command: string[],
  onDescriptor: Buffer,
): Promise<SandboxResult> {
  const child = spawn(
    '/bin/sh',
    ['-c', TRAMPOLINE, 'sh', String(cgroup.procsFiles.length), ...cgroup.procsFiles, ...command],
    {
      // bwrap's flags with the program's environment, and the seccomp filter (ENV_ARGS_FD, SECCOMP_FD).
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
      env: {},
    },
  );
  feedDescriptor(child, ENV_ARGS_FD, onDescriptor);
  feedDescriptor(child, SECCOMP_FD, seccompFilter());
  const ending = await superviseChild(child, {
    limits: spec.limits,
    signal: spec.signal,
    // bwrap's child dies with bwrap only once it has asked for that (PR_SET_PDEATHSIG): a stop in the
    // first moments of a sandbox left it running, holding the output pipes, and the run never ended.
    // So every process in the groups is killed too; what starts after is the caller's destroy()'s.
    kill: () => {
      child.kill('SIGKILL');
      void cgroup.killAll().catch(() => undefined);
    },
    limitHit: () => cgroup.limitHit(),
  });
  return { id, ...ending, peakMemoryBytes: cgroup.peakMemoryBytes() };
}
