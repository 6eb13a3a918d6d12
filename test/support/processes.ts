import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';

export const REPO_ROOT = path.resolve(__dirname, '../..');

/** The long-running services a test can start as separate processes. */
export type ServiceName = 'api' | 'worker';

/** The built entry point production starts (`pnpm api` / `pnpm worker`: node on apps/<name>/dist/main.js). */
export function serviceEntry(name: ServiceName): string {
  return path.join(REPO_ROOT, 'apps', name, 'dist', 'main.js');
}

/**
 * The ports the kernel gives a listener on port 0 (Linux's `ip_local_port_range`, 32768-60999
 * unless the machine says otherwise): where every fixture server of the tests listens.
 */
function ephemeralPorts(): string {
  try {
    const [first, last] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    if (first && last && /^\d+$/.test(first) && /^\d+$/.test(last)) return `${first}-${last}`;
  } catch {
    // Not Linux: the default range.
  }
  return '32768-60999';
}

/**
 * TARGET_ALLOW of the test set-up: exactly where its fixture servers can be, never a whole address.
 * They listen on 127.0.0.1, port 0 (any free port, from the ephemeral range); ports 1 to 9, where
 * nothing listens, are the base URLs of runs that must never reach a site and the unreachable
 * targets of others; 4010-4011 are the Quickstart's (examples/shop.yaml is deployed as it is). Every
 * other port of loopback stays closed to runs as in production (a MariaDB on 3306, a broker on
 * 5672), and the deployment's own Postgres, Redis and API ports are closed whatever this says.
 */
export function testTargetAllow(): string {
  return `127.0.0.1:1-9, 127.0.0.1:4010-4011, 127.0.0.1:${ephemeralPorts()}`;
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

/** True once a Redis server answers PING on 127.0.0.1:`port`. */
async function redisAnswers(port: number): Promise<boolean> {
  const probe = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await probe.connect();
    await probe.ping();
    return true;
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/**
 * A PRIVATE redis-server on 127.0.0.1:`port` (never the machine's shared one), keeping nothing on
 * disk, so a restart comes back empty; resolves once it answers. The caller kills it.
 */
export async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`redis-server on port ${port} exited with ${String(code)}`))),
  );
  exited.catch(() => undefined);
  for (;;) {
    if (await Promise.race([redisAnswers(port), exited])) return child;
    await sleep(50);
  }
}

/** Kills a child process with `signal` and resolves once it has exited. */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}
