import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../support/processes';

/**
 * `pnpm demo --once` as a user runs it (scripts/demo.ts with the built API and worker): it prints
 * every outcome and the view link, stops the API behind that link, and says so, so nobody is left
 * with a link that does not open and no word why.
 */
jest.setTimeout(300_000);

let stateDir: string;
let demo: ChildProcess | undefined;
beforeAll(() => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'testrun-demo-'));
});
afterAll(async () => {
  // A demo still running (the test failed first) stops its API and worker on SIGTERM.
  if (demo && demo.exitCode === null && demo.signalCode === null) {
    const exited = new Promise((resolve) => demo?.once('exit', resolve));
    demo.kill('SIGTERM');
    await exited;
  }
  rmSync(stateDir, { recursive: true, force: true });
});

function runDemo(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const tsx = path.join(REPO_ROOT, 'node_modules/.bin/tsx');
  const child = spawn(tsx, ['--conditions=@testrun/source', 'scripts/demo.ts', '--once'], {
    cwd: REPO_ROOT,
    // The demo's own TARGET_ALLOW, not the test set-up's.
    env: { ...process.env, PORT: '0', DEMO_SITE_PORT: '0', DEMO_STATE_DIR: stateDir, TARGET_ALLOW: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  demo = child;
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

it('prints the view link, says the link stops with it, and the link indeed no longer opens', async () => {
  const { code, stdout, stderr } = await runDemo();
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  // Its TARGET_ALLOW opens the shop's ports and port 2, where the unreachable test goes (not blocked).
  expect(stdout).toContain('Passed: 11 steps');
  expect(stdout).toMatch(/Error at step 1 \(goto "http:\/\/127\.0\.0\.1:2\/"\): target unreachable/);
  const link = /^ {2}(http:\/\/localhost:\d+\/view\/suite-runs\/\S+)$/m.exec(stdout)?.[1];
  expect(link).toBeDefined();
  expect(stdout).toContain('--once: the API stops now, so the link above no longer opens.');
  expect(stdout).toContain('without\n--once to keep the API, the worker and the link up until Ctrl-C.');
  await expect(fetch(link ?? '')).rejects.toThrow();
});
