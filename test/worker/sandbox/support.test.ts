import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, rmdir, writeFile } from 'node:fs/promises';
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

test("the groups a killed worker left are removed, a live worker's are not", async () => {
  const dead = spawnSync('true').pid;
  const live = spawn('sleep', ['60'], { stdio: 'ignore' });
  const group = (pid: number, controller: string) =>
    path.join('/sys/fs/cgroup', controller, 'testrun-sandbox', `sbx-${pid}-left`);
  const controllers = ['memory', 'pids', 'cpu'];
  try {
    for (const controller of controllers) {
      await mkdir(group(dead, controller), { recursive: true });
      await mkdir(group(live.pid as number, controller), { recursive: true });
    }
    expect('driver' in (await detectCgroups())).toBe(true);
    for (const controller of controllers) {
      expect(existsSync(group(dead, controller))).toBe(false);
      expect(existsSync(group(live.pid as number, controller))).toBe(true);
    }
  } finally {
    live.kill('SIGKILL');
    for (const controller of controllers) {
      for (const pid of [dead, live.pid as number]) await rmdir(group(pid, controller)).catch(() => undefined);
    }
  }
});
