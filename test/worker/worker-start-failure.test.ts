import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { sweepStaleScratchDirs } from '../../apps/worker/src/support/scratch-dir';
import { sweepStaleScratch } from '../../apps/worker/src/sandbox';
import { startWorkerService } from '../../apps/worker/src/service/worker-service';
import { memoryLogger, spawnService, waitForLog } from '../e2e/support';
import { present } from '../support/present';
import { stopProcess } from '../support/processes';

// A start that fails late (the worker's HTTP port is taken, and the HTTP server is set up after
// Postgres, the egress proxy, the three Redis connections, the browser and the cancel subscriber)
// closes everything opened before it: this process is left with the sockets, listeners and child
// processes it had before the start, and the egress proxy's port is free again.

/** This process's open handles of the kinds a worker's parts hold. */
function openHandles(): Record<string, number> {
  const kinds = ['TCPSocketWrap', 'TCPServerWrap', 'PipeWrap', 'ProcessWrap'];
  const counts: Record<string, number> = Object.fromEntries(kinds.map((kind) => [kind, 0]));
  for (const kind of process.getActiveResourcesInfo()) if (kind in counts) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/**
 * The handles over `baseline`, kind by kind, once they are gone or 5 s have passed. A handle of the
 * baseline may close meanwhile (a keep-alive socket an earlier test file of this jest worker left):
 * only handles beyond it count.
 */
async function beyond(baseline: Record<string, number>): Promise<Record<string, number>> {
  const over = () =>
    Object.fromEntries(
      Object.entries(openHandles()).flatMap(([kind, n]) =>
        n > (baseline[kind] ?? 0) ? [[kind, n - (baseline[kind] ?? 0)]] : [],
      ),
    );
  const until = Date.now() + 5_000;
  let now = over();
  while (Date.now() < until && Object.keys(now).length > 0) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    now = over();
  }
  return now;
}

function listenAnywhere(port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** The worker's start, task by task, as docs/ARCHITECTURE.md's "Start-up and shutdown" lists it. */
const DOCUMENTED_START_ORDER = [
  'database',
  'egress proxy',
  'run queue connection',
  'run queue',
  'run worker connection',
  'webhook worker connection',
  'browser',
  'scratch directory',
  'cancel subscription',
  'http',
  'playwright runtime',
  'discovery worker',
  'run holds',
  'run worker',
  'webhook queue',
  'webhook worker',
  'drain',
  'reconciler',
  'webhook relay',
];

let taken: Server;

beforeAll(async () => {
  taken = await listenAnywhere();
});

afterAll(async () => {
  await new Promise((resolve) => taken.close(resolve));
});

/** A worker's config whose start fails late: its HTTP port is taken. */
function lateFailing() {
  return readWorkerConfig({
    ...process.env,
    WORKER_HTTP_PORT: String((taken.address() as AddressInfo).port),
    WORKER_HTTP_HOST: '127.0.0.1',
    WORKER_VIDEO: 'off',
  });
}

it('closes the database, the Redis connections, the egress proxy and the browser when a late part fails', async () => {
  const { logger, text } = memoryLogger('worker');
  const config = lateFailing();
  const baseline = openHandles();
  await expect(startWorkerService(config, { logger, reconcile: false })).rejects.toThrow(/EADDRINUSE/);

  // What opened before the failure was really opened (the browser last of them)...
  const lines = text()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { message: string; task?: string; error?: string });
  expect(lines.map((line) => line.message)).toEqual(
    expect.arrayContaining(['browser launched', 'start-up failed; closing what was set up']),
  );
  expect(lines.filter((line) => line.message === 'tear-down failed')).toEqual([]);
  // ...and is closed: no socket to Redis, Postgres or Chromium, no listener, no child process left.
  expect(await beyond(baseline)).toEqual({});
});

it("unmounts a killed worker's scratch quota before removing its scratch directory", async () => {
  // As a worker killed in the middle of a Playwright batch leaves them: its scratch directory under
  // the system's temporary directory, named after its pid, with a batch's tmpfs mounted inside.
  const dead = spawnSync('true').pid;
  const left = path.join(tmpdir(), `testrun-worker-${dead}-killed`);
  const batch = path.join(left, 'pw-batch-run_left');
  mkdirSync(batch, { recursive: true });
  execFileSync('/usr/bin/mount', ['-t', 'tmpfs', '-o', 'size=1m', `testrun-scratch-${dead}`, batch]);
  writeFileSync(path.join(batch, 'trace.zip'), 'left by the killed worker');
  const config = lateFailing();
  try {
    // It gets as far as the taken port: the stale directory did not stop it.
    await expect(
      startWorkerService(config, { logger: memoryLogger('worker').logger, reconcile: false }),
    ).rejects.toThrow(/EADDRINUSE/);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(` ${batch} `);
    expect(existsSync(left)).toBe(false);
  } finally {
    spawnSync('/usr/bin/umount', ['-l', batch]);
    spawnSync('rm', ['-rf', left]);
  }
});

it('a worker killed outright leaves nothing of its own in the temporary directory once the sweep has run', async () => {
  const worker = spawnService('worker', { WORKER_HTTP_PORT: '0', WORKER_CONCURRENCY: '1', LOG_LEVEL: 'info' });
  try {
    await waitForLog(worker, 'worker ready');
  } catch (error) {
    await stopProcess(worker.child);
    throw error;
  }
  // It started its parts in the order docs/ARCHITECTURE.md gives ("Start-up and shutdown").
  const ready = present(
    worker
      .output()
      .split('\n')
      .filter((line) => line.includes('"worker ready"'))
      .map((line) => JSON.parse(line) as { tasks?: string[] })[0],
    'the ready line',
  );
  expect(ready.tasks).toEqual(DOCUMENTED_START_ORDER);
  const pid = present(worker.child.pid, "the worker's pid");
  const its = () => readdirSync(tmpdir()).filter((name) => name.startsWith(`testrun-worker-${pid}-`));
  // Its share (sandbox/share.ts: a tmpfs, holding the code cache from the start) is among them, mounted.
  expect(its()).toContain(`testrun-worker-${pid}-share`);
  const share = path.join(tmpdir(), `testrun-worker-${pid}-share`);
  expect(readFileSync('/proc/self/mountinfo', 'utf8')).toContain(` ${share} `);
  await stopProcess(worker.child, 'SIGKILL');
  // As a worker starts (service-tasks.ts): the killed one's mounts, then its directories.
  await sweepStaleScratch();
  await sweepStaleScratchDirs();
  expect(its()).toEqual([]);
  expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(` ${share} `);
});
