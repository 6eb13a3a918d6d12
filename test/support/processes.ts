import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../..');

/** The long-running services a test can start as separate processes. */
export type ServiceName = 'api' | 'worker';

/** The built entry point production starts (`pnpm api` / `pnpm worker`: node on apps/<name>/dist/main.js). */
export function serviceEntry(name: ServiceName): string {
  return path.join(REPO_ROOT, 'apps', name, 'dist', 'main.js');
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`expected a TCP address, got ${String(address)}`));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/**
 * A service process started the way production starts it (plain node on the built JavaScript, which
 * jest's globalSetup has brought up to date), as one OS process so signals reach it; its stdout and
 * stderr are kept in memory.
 */
export function spawnService(
  name: ServiceName,
  env: Record<string, string>,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  // TESTRUN_SERVICE_NODE_ARGS adds node flags, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile a bench.
  const nodeArgs = (process.env.TESTRUN_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, serviceEntry(name)], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}
