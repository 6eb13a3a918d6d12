import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import {
  mountScratch,
  runSandboxed,
  unmountScratch,
  type SandboxLimits,
  type SandboxResult,
  type SandboxSpec,
} from '../../../apps/worker/src/sandbox';

/*
 * Each test's sandbox: the program is a small Node script run by the sandboxed /usr/bin/node with a
 * scratch directory of its own: either a script the test writes (into a bundle directory bound
 * read-only) or a script file such as the hostile programs of test/fixtures/hostile/ (its folder
 * mounted read-only at /program, as a Playwright spec wrapping them would mount its bundle).
 */

const SMALL_LIMITS: SandboxLimits = {
  memoryBytes: 128 * 1024 * 1024,
  pids: 64,
  cpuQuota: 0.5,
  wallMs: 15_000,
  outputBytes: 256 * 1024,
  tmpBytes: 4 * 1024 * 1024,
};

/** The hostile programs. */
const HOSTILE_DIR = path.resolve(__dirname, '../../fixtures/hostile');
/** Where the folder of a program file of the host appears inside. */
const INSIDE_PROGRAM_DIR = '/program';

interface RunOptions {
  env?: Record<string, string>;
  limits?: Partial<SandboxLimits>;
  /** The scratch directory's name under {@link Harness.base} (default: a new one per run). */
  scratch?: string;
  /** Mounts a scratch tmpfs of this size first (unmounted by {@link Harness.close}). */
  scratchBytes?: number;
  signal?: AbortSignal;
  network?: SandboxSpec['network'];
  readOnlyMounts?: SandboxSpec['readOnlyMounts'];
}

type HarnessResult = SandboxResult & { scratchDir: string };

export interface Harness {
  /** The host directory holding the bundles and scratch directories of this file. */
  base: string;
  /** Writes `source` as a script and runs it sandboxed. */
  run(source: string, options?: RunOptions): Promise<HarnessResult>;
  /** Runs a script file of the host (its folder mounted read-only at /program) with `args`. */
  runProgram(file: string, args?: readonly string[], options?: RunOptions): Promise<HarnessResult>;
  /** Runs test/fixtures/hostile/<name>.js sandboxed with `args`. */
  runHostile(name: string, args?: readonly string[], options?: RunOptions): Promise<HarnessResult>;
  /** After a hostile run: the test's process (in the worker's place) is fine and a normal program still runs. */
  expectHealthy(): Promise<void>;
  close(): Promise<void>;
}

export async function sandboxHarness(): Promise<Harness> {
  const base = await mkdtemp(path.join(tmpdir(), 'testrun-sandbox-test-'));
  const bundle = path.join(base, 'bundle');
  await mkdir(bundle);
  const mounted: string[] = [];
  let runs = 0;
  const execute = async (command: string[], options: RunOptions, extraMounts: SandboxSpec['readOnlyMounts'] = []) => {
    runs += 1;
    const scratchDir = path.join(base, options.scratch ?? `scratch-${runs}`);
    await mkdir(scratchDir, { recursive: true });
    if (options.scratchBytes !== undefined) {
      await mountScratch(scratchDir, options.scratchBytes);
      mounted.push(scratchDir);
    }
    const spec: SandboxSpec = {
      command: process.execPath,
      args: command,
      readOnlyBinds: [bundle],
      readOnlyMounts: [...extraMounts, ...(options.readOnlyMounts ?? [])],
      scratchDir,
      env: { PATH: '/usr/bin:/bin', ...options.env },
      limits: { ...SMALL_LIMITS, ...options.limits },
      network: options.network ?? 'none',
      signal: options.signal,
    };
    const result = await runSandboxed(spec);
    await expectNothingLeft(result);
    return { ...result, scratchDir };
  };
  const run = async (source: string, options: RunOptions = {}) => {
    const script = path.join(bundle, `program-${runs + 1}.js`);
    await writeFile(script, source);
    return execute([script], options);
  };
  const runProgram = (file: string, args: readonly string[] = [], options: RunOptions = {}) =>
    execute([path.posix.join(INSIDE_PROGRAM_DIR, path.basename(file)), ...args], options, [
      { from: path.dirname(file), to: INSIDE_PROGRAM_DIR },
    ]);
  return {
    base,
    run,
    runProgram,
    runHostile: (name, args = [], options = {}) => runProgram(path.join(HOSTILE_DIR, `${name}.js`), args, options),
    async expectHealthy() {
      process.kill(process.pid, 0);
      const result = await run(`console.log(JSON.stringify({ sum: 1 + 1 }));`);
      expect(result).toMatchObject({ exitCode: 0, limit: null, aborted: false, stderr: '' });
      expect(report(result)).toEqual({ sum: 2 });
    },
    async close() {
      for (const dir of mounted) await unmountScratch(dir);
      await rm(base, { recursive: true, force: true });
    },
  };
}

/**
 * The processes of a user on the host, each with its state (`Z`: killed, waiting to be reaped;
 * `X`: reaped, its entry not yet gone from /proc).
 */
function processesOf(uid: number): { pid: string; state: string }[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== uid) return [];
        return [{ pid, state: /^State:\s+(\S)/m.exec(status)?.[1] ?? '?' }];
      } catch {
        return [];
      }
    });
}

/**
 * The sandbox's groups are removed and no process of its user is left on the host. A fork bomb's
 * last children can still be zombies when the groups go (killed, out of the groups, not yet
 * reaped by the host's init, or reaped with their /proc entry not yet removed): they must be gone
 * soon after, and none may be alive.
 */
async function expectNothingLeft(result: SandboxResult): Promise<void> {
  for (const controller of ['memory', 'pids', 'cpu']) {
    expect(existsSync(path.join('/sys/fs/cgroup', controller, 'testrun-sandbox', result.id))).toBe(false);
  }
  const { uid } = result;
  if (uid === undefined) throw new Error('runSandboxed reported no uid');
  expect(processesOf(uid).filter((p) => p.state !== 'Z' && p.state !== 'X')).toEqual([]);
  for (let tries = 0; tries < 100 && processesOf(uid).length > 0; tries += 1) await sleep(100);
  expect(processesOf(uid)).toEqual([]);
}

/** The last line of stdout, parsed: the programs report what they saw as one JSON line. */
export function report(result: SandboxResult): unknown {
  const lines = result.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? 'null');
}

/** A TCP listener of the host on `host` (a loopback address) that counts and drops the connections it accepts. */
export async function countingListener(
  host = '127.0.0.1',
): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  server.listen(0, host);
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port, connections: () => connections };
}
