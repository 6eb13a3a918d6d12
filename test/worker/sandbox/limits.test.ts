import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkSandboxSupport, groupLimitNow } from '../../../apps/worker/src/sandbox';
import { report, sandboxHarness, type Harness } from './sandbox-harness';

/*
 * Hostile programs (test/fixtures/hostile/) against the limits: each ends with the limit it
 * reached, the test's process (in the worker's place) carries on, the harness checks after every
 * run that the sandbox's groups are removed and none of its processes is left, and a normal program
 * runs after each.
 */

jest.setTimeout(60_000);

const MiB = 1024 * 1024;
let harness: Harness;

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  harness = await sandboxHarness();
});

afterEach(() => harness.expectHealthy());

afterAll(() => harness.close());

test('memory without bound ends with limit memory', async () => {
  const result = await harness.runHostile('allocate', [], { limits: { memoryBytes: 96 * MiB } });
  expect(result.limit).toBe('memory');
  expect(groupLimitNow(result.scratchDir)).toBe('memory');
  expect(result.exitCode).not.toBe(0);
  expect(result.peakMemoryBytes).toBeGreaterThan(80 * MiB);
  expect(result.peakMemoryBytes).toBeLessThanOrEqual(96 * MiB);
});

test('forking without bound ends with limit pids', async () => {
  const result = await harness.runHostile('fork-bomb', [], { limits: { pids: 24, wallMs: 2500 } });
  expect(result.limit).toBe('pids');
  // Its groups are gone, and the limit they reached is still told: a result line read after the
  // sandbox ended is attributed to it (a fork bomb a test's own timeout outlasted).
  expect(groupLimitNow(result.scratchDir)).toBe('pids');
  expect(groupLimitNow(path.join(result.scratchDir, 'elsewhere'))).toBeNull();
});

/** The CPU group of this worker's running sandbox (there is one at a time in this file). */
function runningCpuGroup(): string | undefined {
  const parent = '/sys/fs/cgroup/cpu/testrun-sandbox';
  const name = readdirSync(parent).find((entry) => entry.startsWith(`sbx-${process.pid}-`));
  return name === undefined ? undefined : path.join(parent, name);
}

test('a CPU spin is held to its quota and ends with limit time at the wall-clock deadline', async () => {
  const running = harness.runHostile('spin', ['2'], { limits: { wallMs: 2500, cpuQuota: 0.2 } });
  // While it spins in two processes, the group's quota throttles it (the kernel counts the periods).
  const state = { done: false };
  const settle = () => (state.done = true);
  running.then(settle, settle);
  let throttled = 0;
  while (!state.done && throttled === 0) {
    await new Promise((r) => setTimeout(r, 25));
    const group = runningCpuGroup();
    if (group === undefined) continue;
    try {
      // Its limits are written before anything enters it.
      if (readFileSync(path.join(group, 'cgroup.procs'), 'utf8').trim() === '') continue;
      expect(readFileSync(path.join(group, 'cpu.cfs_quota_us'), 'utf8').trim()).toBe('20000');
      throttled = Number(/nr_throttled (\d+)/.exec(readFileSync(path.join(group, 'cpu.stat'), 'utf8'))?.[1] ?? 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  const result = await running;
  expect(throttled).toBeGreaterThan(0);
  expect(result.limit).toBe('time');
  expect(result.signal).toBe('SIGKILL');
});

test('stdout without bound ends with limit output, the output capped', async () => {
  const result = await harness.runHostile('flood-stdout', [], { limits: { outputBytes: 512 * 1024 } });
  expect(result.limit).toBe('output');
  expect(Buffer.byteLength(result.stdout)).toBeLessThanOrEqual(512 * 1024);
  expect(result.stdout.length).toBeGreaterThan(0);
});

test('writing /tmp without bound stops at the size of its tmpfs, nothing on the host disk', async () => {
  const name = `fill-${process.pid}-${Date.now()}`;
  const result = await harness.runHostile('fill-disk', [`/tmp/${name}`], { limits: { tmpBytes: 4 * MiB } });
  expect(result).toMatchObject({ exitCode: 0, limit: null });
  const { written, error } = report(result) as { written: number; error: string };
  expect(error).toBe('ENOSPC');
  expect(written).toBeLessThanOrEqual(4 * MiB);
  expect(existsSync(path.join(tmpdir(), name))).toBe(false);
  expect(existsSync(path.join('/tmp', name))).toBe(false);
});

test("writing the scratch directory without bound stops at its quota (ENOSPC inside), the host's disk untouched", async () => {
  const hostFree = statfsSync(harness.base).bavail * statfsSync(harness.base).bsize;
  const result = await harness.runHostile('fill-disk', ['/work/fill'], {
    scratchBytes: 8 * MiB,
    limits: { memoryBytes: 128 * MiB },
  });
  expect(result.stderr).toBe('');
  // The program caught ENOSPC and exited 0: the quota did not end it, so no limit is reported.
  expect(result).toMatchObject({ exitCode: 0, limit: null });
  const { written, error } = report(result) as { written: number; error: string };
  expect(error).toBe('ENOSPC');
  expect(written).toBeLessThanOrEqual(8 * MiB);
  // What it wrote is there for the host to read, on the tmpfs, not on the host's disk.
  const scratch = statfsSync(result.scratchDir);
  expect(scratch.type).toBe(0x01021994);
  expect(scratch.blocks * scratch.bsize).toBe(8 * MiB);
  expect(readFileSync(path.join(result.scratchDir, 'fill')).length).toBe(written);
  const hostFreeAfter = statfsSync(harness.base).bavail * statfsSync(harness.base).bsize;
  expect(hostFree - hostFreeAfter).toBeLessThan(4 * MiB);
});

test('a program that the full scratch quota ends is reported with limit disk', async () => {
  const result = await harness.runHostile('fill-disk', ['/work/fill', 'crash'], {
    scratchBytes: 8 * MiB,
    limits: { memoryBytes: 128 * MiB },
  });
  expect(result.exitCode).not.toBe(0);
  expect(result.limit).toBe('disk');
  expect(result.stderr).toContain('ENOSPC');
});

test('killing its parent, its init and every process it can reach kills only the sandbox', async () => {
  const sentinel = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    const result = await harness.runHostile('kill-parent', [String(sentinel.pid)]);
    // kill -9 -1 from the shell took the program with it; before that, the signals reached nothing outside.
    expect(result.signal === 'SIGKILL' || result.exitCode !== 0).toBe(true);
    expect(report(result)).toEqual({
      // The host's process is not in its PID namespace; its parent and init are not its user;
      // kill(-1) finds nothing else it may signal.
      tries: { host: 'ESRCH', parent: 'EPERM', init: 'EPERM', all: 'ESRCH' },
      uid: result.uid,
    });
    expect(sentinel.exitCode).toBeNull();
    expect(sentinel.signalCode).toBeNull();
    process.kill(sentinel.pid as number, 0);
  } finally {
    sentinel.kill('SIGKILL');
  }
});

test('killing its parent through the relay (network given) leaves the relay and the worker running', async () => {
  // Without a proxy socket to reach, the relay still starts the program as its child.
  const result = await harness.runHostile('kill-parent', [], {
    network: { proxySocketPath: '/dev/null', port: 3128 },
  });
  expect(report(result)).toMatchObject({ tries: { parent: 'EPERM', init: 'EPERM' } });
});

test('an abort kills the sandbox', async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  const result = await harness.run(`setInterval(() => {}, 1000);`, { signal: controller.signal });
  expect(result).toMatchObject({ aborted: true, limit: null, signal: 'SIGKILL' });
});

test('an abort at any moment of its start kills the sandbox, and the run ends', async () => {
  // bwrap's child outlived a bwrap killed before it had asked to die with it: the program ran on,
  // holding the output pipes, and neither the abort nor the wall-clock limit ended the run.
  const outcomes: string[] = [];
  for (let at = 0; at < 120; at += 4) {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), at);
    const ended = harness
      .run(`setInterval(() => {}, 1000);`, { signal: controller.signal, limits: { wallMs: 4_000 } })
      .then((r) => (r.aborted ? 'aborted' : `ended without the abort: ${JSON.stringify(r)}`));
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<string>(
      (resolve) => (timer = setTimeout(() => resolve(`still running at ${at} ms`), 15_000)),
    );
    outcomes.push(await Promise.race([ended, hung]).finally(() => clearTimeout(timer)));
  }
  expect(outcomes.filter((o) => o !== 'aborted')).toEqual([]);
});
