import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { detectCgroups } from '../../../apps/worker/src/sandbox/cgroups-detect';
import { checkSandboxSupport, mountScratch, unmountScratch } from '../../../apps/worker/src/sandbox';
import { sweepStaleScratch } from '../../../apps/worker/src/sandbox/scratch';

/* The refusal: what the sandbox says when a machine cannot run it, and that this one can. */

test('this machine can run the sandbox (root, bubblewrap, setpriv, a scratch tmpfs, cgroup v1 memory, pids and cpu)', async () => {
  expect(await checkSandboxSupport()).toBeNull();
  const detected = await detectCgroups();
  expect('driver' in detected && detected.driver.version).toBe('v1');
});

test('without the cgroup controllers the sandbox refuses, naming what is missing', async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'testrun-cgroup-root-'));
  try {
    await mkdir(path.join(root, 'unified'));
    expect(await detectCgroups(root)).toEqual({
      reason: `the cgroup v1 controllers memory, pids, cpu are not mounted under ${root}, and ${root} is not a cgroup2 mount (its cgroup v2 hierarchy is only ${root}/unified, beside v1, without those controllers): boot with systemd.unified_cgroup_hierarchy=1 for cgroup v2, or mount the v1 controllers`,
    });
    await rm(path.join(root, 'unified'), { recursive: true });
    expect(await detectCgroups(root)).toEqual({
      reason: `the cgroup v1 controllers memory, pids, cpu are not mounted under ${root}`,
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

test("the scratch tmpfs mounts a killed worker left are unmounted and removed, a live worker's are not", async () => {
  const dead = spawnSync('true').pid;
  const live = spawn('sleep', ['60'], { stdio: 'ignore' });
  const base = await mkdtemp(path.join(tmpdir(), 'testrun-stale-scratch-'));
  const deadDir = path.join(base, 'dead');
  const liveDir = path.join(base, 'live');
  const mounted = (dir: string) => readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${dir} `);
  try {
    for (const [dir, pid] of [
      [deadDir, dead],
      [liveDir, live.pid as number],
    ] as const) {
      await mkdir(dir);
      // As mountScratch names them: the worker's pid in the source.
      execFileSync('/usr/bin/mount', ['-t', 'tmpfs', '-o', 'size=1m', `testrun-scratch-${pid}`, dir]);
      await writeFile(path.join(dir, 'left.txt'), 'left by a worker');
    }
    await sweepStaleScratch();
    expect(mounted(deadDir)).toBe(false);
    expect(existsSync(deadDir)).toBe(false);
    expect(mounted(liveDir)).toBe(true);
    expect(readFileSync(path.join(liveDir, 'left.txt'), 'utf8')).toBe('left by a worker');
    await unmountScratch(liveDir);
    expect(mounted(liveDir)).toBe(false);
  } finally {
    live.kill('SIGKILL');
    for (const dir of [deadDir, liveDir]) spawnSync('/usr/bin/umount', ['-l', dir]);
    await rm(base, { recursive: true, force: true });
  }
});

test('a scratch quota mount is refused with the reason when the directory does not exist', async () => {
  await expect(mountScratch('/nonexistent/testrun-scratch', 1024 * 1024)).rejects.toThrow(
    /^cannot mount the scratch tmpfs at \/nonexistent\/testrun-scratch: /,
  );
});

test('a worker that is not root is refused, saying so', () => {
  // The built worker's sandbox module (jest's global set-up builds it), started as nobody: copied to
  // a directory anybody can read, since the checkout may sit under one only root can enter.
  const copy = mkdtempSync(path.join(tmpdir(), 'testrun-support-'));
  cpSync(path.resolve(__dirname, '../../../apps/worker/dist/sandbox'), copy, { recursive: true });
  chmodSync(copy, 0o755);
  const support = path.join(copy, 'support.js');
  const said = execFileSync(
    '/usr/bin/setpriv',
    [
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      process.execPath,
      '-e',
      `require(${JSON.stringify(support)}).checkSandboxSupport().then((reason) => process.stdout.write(String(reason)))`,
    ],
    { encoding: 'utf8', env: {} },
  );
  rmSync(copy, { recursive: true, force: true });
  expect(said).toBe(
    'the worker runs as uid 65534, and the sandbox needs root (uid 0) to create cgroups, mount the scratch quota and run tenant code as a user of its own',
  );
});
