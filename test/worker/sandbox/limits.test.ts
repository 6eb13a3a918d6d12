import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkSandboxSupport } from '../../../apps/worker/src/sandbox';
import { report, sandboxHarness, type Harness } from './sandbox-harness';

/*
 * Hostile programs against the limits: each ends with the limit it reached, the test's process (in
 * the worker's place) carries on, and the harness checks after every run that the sandbox's groups
 * are removed and none of its processes is left.
 */

jest.setTimeout(60_000);

let harness: Harness;

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  harness = await sandboxHarness();
});

afterAll(() => harness.close());

test('memory without bound ends with limit memory', async () => {
  const result = await harness.run(`const kept = []; for (;;) kept.push(Buffer.alloc(4 * 1024 * 1024, 1));`, {
    limits: { memoryBytes: 96 * 1024 * 1024 },
  });
  expect(result.limit).toBe('memory');
  expect(result.exitCode).not.toBe(0);
  expect(result.peakMemoryBytes).toBeGreaterThan(80 * 1024 * 1024);
  expect(result.peakMemoryBytes).toBeLessThanOrEqual(96 * 1024 * 1024);
});

test('forking without bound ends with limit pids', async () => {
  const result = await harness.run(
    `
    const { spawn } = require('child_process');
    const more = () => {
      const child = spawn('/bin/sh', ['-c', 'sleep 100']);
      child.on('error', () => {});
      setImmediate(more);
    };
    more();
  `,
    { limits: { pids: 24, wallMs: 2500 } },
  );
  expect(result.limit).toBe('pids');
});

test('a CPU spin ends with limit time at the wall-clock deadline', async () => {
  const started = Date.now();
  const result = await harness.run(`for (;;) {}`, { limits: { wallMs: 1500, cpuQuota: 0.2 } });
  expect(result.limit).toBe('time');
  expect(result.signal).toBe('SIGKILL');
  expect(Date.now() - started).toBeLessThan(10_000);
});

test('stdout without bound ends with limit output, the output capped', async () => {
  const result = await harness.run(
    `
    // Straight to the descriptor, as fast as the worker reads it (process.stdout would queue in memory).
    const fs = require('fs');
    const line = Buffer.alloc(65536, 'x');
    for (;;) { try { fs.writeSync(1, line); } catch (e) { if (e.code !== 'EAGAIN') throw e; } }
  `,
    {
      limits: { outputBytes: 512 * 1024 },
    },
  );
  expect(result.limit).toBe('output');
  expect(Buffer.byteLength(result.stdout)).toBeLessThanOrEqual(512 * 1024);
  expect(result.stdout.length).toBeGreaterThan(0);
});

test('writing /tmp without bound stops at the size of its tmpfs, nothing on the host disk', async () => {
  const name = `fill-${process.pid}-${Date.now()}`;
  const result = await harness.run(
    `
    const fs = require('fs');
    const chunk = Buffer.alloc(256 * 1024, 1);
    let written = 0, error;
    try { for (;;) { fs.appendFileSync('/tmp/${name}', chunk); written += chunk.length; } }
    catch (e) { error = e.code; }
    console.log(JSON.stringify({ written, error }));
  `,
    { limits: { tmpBytes: 4 * 1024 * 1024 } },
  );
  expect(result).toMatchObject({ exitCode: 0, limit: null });
  const { written, error } = report(result) as { written: number; error: string };
  expect(error).toBe('ENOSPC');
  expect(written).toBeLessThanOrEqual(4 * 1024 * 1024);
  expect(existsSync(path.join(tmpdir(), name))).toBe(false);
  expect(existsSync(path.join('/tmp', name))).toBe(false);
});

test('killing its parent and every process it can reach kills only the sandbox', async () => {
  const sentinel = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    const result = await harness.run(
      `
      const { execSync } = require('child_process');
      const tries = {};
      const attempt = (name, action) => { try { action(); tries[name] = 'sent'; } catch (e) { tries[name] = e.code; } };
      attempt('sentinel', () => process.kill(${sentinel.pid}, 'SIGKILL'));
      attempt('parent', () => process.kill(process.ppid, 'SIGKILL'));
      attempt('all', () => process.kill(-1, 'SIGKILL'));
      console.log(JSON.stringify(tries));
      execSync('kill -9 -1');
    `,
    );
    // kill -9 -1 from the shell took the program with it; before that, the signals reached nothing outside.
    expect(result.signal === 'SIGKILL' || result.exitCode !== 0).toBe(true);
    expect(report(result)).toMatchObject({ sentinel: 'ESRCH' });
    expect(sentinel.exitCode).toBeNull();
    expect(sentinel.signalCode).toBeNull();
    process.kill(sentinel.pid as number, 0);
    process.kill(process.pid, 0);
  } finally {
    sentinel.kill('SIGKILL');
  }
});

test('an abort kills the sandbox', async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  const result = await harness.run(`setInterval(() => {}, 1000);`, { signal: controller.signal });
  expect(result).toMatchObject({ aborted: true, limit: null, signal: 'SIGKILL' });
});
