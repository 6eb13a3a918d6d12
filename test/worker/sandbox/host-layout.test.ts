import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkSandboxSupport, shareFolder } from '../../../apps/worker/src/sandbox';
import { report, sandboxHarness, type Harness } from './sandbox-harness';

/*
 * Nothing of the host's layout shows inside a sandbox: its mount table (a bind's fourth field is
 * its source's path within its file system), its cgroups and the command lines of its processes
 * (its init is a fork of bubblewrap) name neither the repository, the worker's temporary folders
 * nor its scratch directory. The relay and the egress proxy's socket come from the worker's share.
 */

jest.setTimeout(60_000);

const REPO_ROOT = path.resolve(__dirname, '../../..');
const READ_LAYOUT = path.resolve(__dirname, '../../fixtures/hostile/read-layout.js');

let harness: Harness;
let proxy: Server;
let socketPath: string;

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  harness = await sandboxHarness();
  // Where the worker makes a sandbox's socket of the egress proxy.
  socketPath = path.join(await shareFolder('egress', 0o700), 'layout.sock');
  proxy = createServer((socket) => socket.destroy());
  proxy.listen(socketPath);
  await once(proxy, 'listening');
});

afterAll(async () => {
  proxy.close();
  await harness.close();
});

interface Layout {
  mountinfo: string;
  mounts: string;
  cgroup: string;
  cmdlines: string[];
}

/** Each mount's point and root (octal escapes left as they are). */
function mountsOf(mountinfo: string): Map<string, string> {
  return new Map(
    mountinfo
      .trim()
      .split('\n')
      .map((line) => line.split(' '))
      .map((fields) => [fields[4] ?? '', fields[3] ?? '']),
  );
}

test('its mount table, cgroups and process list name no host path of the worker', async () => {
  const result = await harness.run(readFileSync(READ_LAYOUT, 'utf8'), {
    scratchBytes: 1024 * 1024,
    network: { proxySocketPath: socketPath, port: 3128 },
  });
  expect(result).toMatchObject({ exitCode: 0, limit: null });
  const layout = report(result) as Layout;
  expect(layout.mountinfo).toContain(' /work ');
  expect(layout.cmdlines.length).toBeGreaterThan(2);
  // The harness's own bind of the program's folder is the test's, not the worker's.
  const seen = JSON.stringify(layout).replaceAll(path.join(harness.base, 'bundle'), '<program>');
  for (const hostPath of [REPO_ROOT, `${tmpdir()}/`, result.scratchDir, '/root', 'testrun-worker-'])
    expect(seen).not.toContain(hostPath);
  const mounts = mountsOf(layout.mountinfo);
  expect(mounts.get('/run/testrun/relay')).toBe('/relay');
  expect(mounts.get('/run/testrun/egress.sock')).toBe('/egress/layout.sock');
  expect(mounts.get('/work')).toBe('/');
  // Its own cgroup namespace: each of its groups is its root.
  for (const line of layout.cgroup.trim().split('\n')) expect(line).toMatch(/:\/$/);
});
