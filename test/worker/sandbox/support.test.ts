import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { detectCgroups } from '../../../apps/worker/src/sandbox/cgroups';
import { checkSandboxSupport } from '../../../apps/worker/src/sandbox';

/* The refusal: what the sandbox says when a machine cannot run it, and that this one can. */

test('this machine can run the sandbox (bubblewrap, cgroup v1 memory, pids and cpu)', async () => {
  expect(await checkSandboxSupport()).toBeNull();
  const detected = await detectCgroups();
  expect('driver' in detected && detected.driver.version).toBe('v1');
});

test('without the cgroup controllers the sandbox refuses, naming what is missing', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'testrun-cgroup-root-'));
  try {
    await mkdir(path.join(root, 'unified'));
    expect(await detectCgroups(root)).toEqual({
      reason: `the cgroup v1 controllers memory, pids, cpu are not mounted under ${root} (cgroup v2 is present, and not supported yet)`,
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a hierarchy where groups cannot be created makes the sandbox refuse', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'testrun-cgroup-root-'));
  try {
    // Looks mounted, but the place of the sandboxes' groups is taken by a file.
    for (const controller of ['memory', 'pids', 'cpu']) {
      await mkdir(path.join(root, controller));
      await writeFile(path.join(root, controller, 'cgroup.procs'), '');
    }
    await writeFile(path.join(root, 'memory', 'testrun-sandbox'), '');
    const detected = await detectCgroups(root);
    expect('reason' in detected && detected.reason).toMatch(/^cannot create a cgroup under /);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
