import { spawn, type StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkSandboxSupport } from '../../../apps/worker/src/sandbox';

/*
 * Only what a program is given crosses into it: a worker whose launcher left descriptors open (a
 * pipe at 251, a file at 250, neither close-on-exec in the worker, as a child inherits them) starts
 * programs the ways it does: sandboxed, sandboxed through the relay, without the sandboxed
 * (PLAYWRIGHT_SANDBOX=off), and Chromium through its network namespace's launcher. Each lists its
 * descriptors: stdio only, and Chromium's DevTools pipe (3 and 4). Without the closing step
 * (apps/worker/src/sandbox/close-fds.ts), 250 and 251 reached each of them.
 */

jest.setTimeout(60_000);

const WORKER = path.resolve(__dirname, '../../fixtures/sandbox/inherited-descriptors.js');
const DIST = path.resolve(__dirname, '../../../apps/worker/dist');

test('descriptors the worker inherited reach none of the programs it starts', async () => {
  expect(await checkSandboxSupport()).toBeNull();
  const dir = mkdtempSync(path.join(tmpdir(), 'testrun-inherited-'));
  const file = openSync(path.join(dir, 'launcher.log'), 'a');
  try {
    const stdio: StdioOptions = ['ignore', 'pipe', 'pipe', ...Array<'ignore'>(247).fill('ignore'), file, 'pipe'];
    const worker = spawn(process.execPath, [WORKER, DIST], { stdio });
    let stdout = '';
    let stderr = '';
    worker.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    worker.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(worker, 'exit')) as [number | null];
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const seen = JSON.parse(stdout.trim().split('\n').pop() ?? 'null') as Record<string, number[]>;
    // The worker has them.
    expect(seen.own).toEqual(expect.arrayContaining([250, 251]));
    expect(seen).toMatchObject({
      sandboxed: [0, 1, 2],
      relayed: [0, 1, 2],
      unsandboxed: [0, 1, 2],
      browser: [0, 1, 2, 3, 4],
    });
    expect(readFileSync(path.join(dir, 'launcher.log'), 'utf8')).toBe('');
  } finally {
    closeSync(file);
    rmSync(dir, { recursive: true, force: true });
  }
});
