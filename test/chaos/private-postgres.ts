import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../e2e/support';

/**
 * A PRIVATE Postgres cluster (initdb) on its own port and directory, for the tests that stop
 * Postgres: never the machine's shared one.
 */
export type PrivatePostgres = {
  /** The URL of database `name` on the cluster. */
  url(name: string): string;
  /** Stops the cluster (fast shutdown: clients are disconnected). */
  stop(): void;
  start(): void;
  /** Stops the cluster if it runs and deletes its directory. */
  close(): void;
};

const BIN = (() => {
  const versions = readdirSync('/usr/lib/postgresql').sort();
  const latest = versions[versions.length - 1];
  if (!latest) throw new Error('no Postgres server binaries under /usr/lib/postgresql');
  return path.join('/usr/lib/postgresql', latest, 'bin');
})();

/** Runs a Postgres binary as the postgres user when this process is root (the server refuses root). */
function pg(binary: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const command = asRoot ? 'runuser' : path.join(BIN, binary);
  const argv = asRoot ? ['-u', 'postgres', '--', path.join(BIN, binary), ...args] : args;
  const result = spawnSync(command, argv, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${binary} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
}

/** Creates and starts a private cluster. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(path.join(tmpdir(), 'testrun-chaos-pg-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const data = path.join(dir, 'data');
  pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const cluster: PrivatePostgres = {
    url: (name) => `postgresql://postgres@127.0.0.1:${port}/${name}`,
    stop: () => pg('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    start: () =>
      pg('pg_ctl', [
        '-D',
        data,
        '-w',
        '-l',
        path.join(dir, 'server.log'),
        '-o',
        `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}`,
        'start',
      ]),
    close: () => {
      try {
        cluster.stop();
      } catch {
        // already stopped by a failed test
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  cluster.start();
  return cluster;
}
