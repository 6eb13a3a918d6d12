import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isAlive, pidsIn } from '../../../apps/worker/src/sandbox/cgroups';
import { detectCgroups } from '../../../apps/worker/src/sandbox/cgroups-detect';
import type { CgroupFs } from '../../../apps/worker/src/sandbox/cgroups-v2';

/*
 * The cgroup v2 driver against a temporary directory laid out as a cgroup2 filesystem: this
 * machine's controllers are held by cgroup v1, so no real v2 group can have memory, pids or cpu here.
 * The test stands in for the kernel: its `mkdir` fills a new group with interface files (those of a
 * kernel with or without memory.peak, cgroup.kill and swap accounting), its `rmdir` refuses a group
 * whose cgroup.procs lists a live process, as the kernel does. What the driver writes (limits, pids,
 * subtree_control) is read back from the files; what the kernel would report (memory.events,
 * pids.events, memory.peak, memory.current) is written by the test.
 */

const MiB = 1024 * 1024;
const LIMITS = { memoryBytes: 256 * MiB, pids: 64, cpuQuota: 0.5 };
const OWN = '/kubepods/burstable/pod-1/ctr-1';

interface Kernel extends CgroupFs {
  /** The groups removed, with what their cgroup.kill held then (null: no cgroup.kill). */
  removed: Map<string, string | null>;
}

/** A kernel of 5.19 or later (`modern`: memory.peak, cgroup.kill, swap accounting) or of 5.10. */
function fakeKernel(modern: boolean, refuse?: string): Kernel {
  const removed = new Map<string, string | null>();
  return {
    removed,
    async mkdir(dir) {
      if (refuse) throw Object.assign(new Error(`${refuse}: refused, mkdir '${dir}'`), { code: refuse });
      await mkdir(dir);
      const files: Record<string, string> = {
        'cgroup.procs': '',
        'cgroup.type': 'domain\n',
        'memory.current': '0\n',
        'memory.events': 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n',
        'pids.events': 'max 0\n',
        ...(modern ? { 'memory.peak': '0\n', 'cgroup.kill': '', 'memory.swap.max': 'max\n' } : {}),
      };
      for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
    },
    async rmdir(dir) {
      if (!existsSync(dir)) throw Object.assign(new Error(`ENOENT: ${dir}`), { code: 'ENOENT' });
      if ((await pidsIn(dir)).some(isAlive)) throw Object.assign(new Error(`EBUSY: ${dir}`), { code: 'EBUSY' });
      const kill = path.join(dir, 'cgroup.kill');
      removed.set(path.basename(dir), existsSync(kill) ? readFileSync(kill, 'utf8') : null);
      await rm(dir, { recursive: true });
    },
  };
}

let base: string;
let root: string;
let selfCgroup: string;

/** A cgroup2 mount at `root` (as a container with its own cgroup namespace sees it, or a host). */
async function layOut(options: { rootControllers?: string; ownControllers?: string; procs?: number[] } = {}) {
  await writeFile(
    path.join(root, 'cgroup.controllers'),
    options.rootControllers ?? 'cpuset cpu io memory hugetlb pids rdma misc\n',
  );
  await writeFile(path.join(root, 'cgroup.procs'), '');
  await writeFile(path.join(root, 'cgroup.subtree_control'), 'cpu memory pids\n');
  const own = path.join(root, OWN);
  await mkdir(own, { recursive: true });
  await writeFile(
    path.join(own, 'cgroup.controllers'),
    options.ownControllers ?? 'cpuset cpu io memory hugetlb pids\n',
  );
  await writeFile(path.join(own, 'cgroup.type'), 'domain\n');
  await writeFile(path.join(own, 'cgroup.procs'), (options.procs ?? [1, process.pid]).map((p) => `${p}\n`).join(''));
  await writeFile(path.join(own, 'cgroup.subtree_control'), '');
  await writeFile(selfCgroup, `0::${OWN}\n`);
  return own;
}

const read = (file: string) => readFileSync(file, 'utf8');

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'testrun-cgroup2-'));
  root = path.join(base, 'sys-fs-cgroup');
  await mkdir(root);
  selfCgroup = path.join(base, 'proc-self-cgroup');
});

afterEach(() => rm(base, { recursive: true, force: true }));

test('the worker moves its cgroup into a leaf, enables memory, pids and cpu, and makes groups with every limit', async () => {
  const own = await layOut({ procs: [1, 77, process.pid] });
  const kernel = fakeKernel(true);
  const detected = await detectCgroups(root, { selfCgroupFile: selfCgroup, fs: kernel });
  if (!('driver' in detected)) throw new Error(detected.reason);
  expect(detected.driver.version).toBe('v2');
  // Every process of the worker's cgroup went into the leaf, one pid per write, before the controllers.
  expect(read(path.join(own, 'testrun-worker', 'cgroup.procs'))).toBe(`1\n77\n${process.pid}\n`);
  expect(read(path.join(own, 'cgroup.subtree_control'))).toBe('+memory +pids +cpu');
  // The probe group was made and removed with cgroup.kill.
  expect([...kernel.removed]).toEqual([[expect.stringMatching(/^probe-/), '1']]);

  const group = await detected.driver.create('sbx-1-a', LIMITS);
  const dir = path.join(own, 'sbx-1-a');
  expect(group.procsFiles).toEqual([path.join(dir, 'cgroup.procs')]);
  expect(read(path.join(dir, 'memory.max'))).toBe(String(256 * MiB));
  expect(read(path.join(dir, 'memory.swap.max'))).toBe('0');
  expect(read(path.join(dir, 'pids.max'))).toBe('64');
  expect(read(path.join(dir, 'cpu.max'))).toBe('50000 100000');
  expect(group.limitHit()).toBeNull();
  await writeFile(path.join(dir, 'pids.events'), 'max 3\n');
  expect(group.limitHit()).toBe('pids');
  // The OOM killer explains an end better than the refused forks that came with it.
  await writeFile(path.join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 812\noom 2\noom_kill 1\n');
  expect(group.limitHit()).toBe('memory');
  await writeFile(path.join(dir, 'memory.peak'), '201326592\n');
  await writeFile(path.join(dir, 'memory.current'), '4096\n');
  expect(group.peakMemoryBytes()).toBe(201326592);
  await group.destroy();
  expect(existsSync(dir)).toBe(false);
  expect(kernel.removed.get('sbx-1-a')).toBe('1');
});

test('a kernel before 5.19 (no memory.peak, cgroup.kill or swap accounting): memory.current is sampled, each pid killed', async () => {
  const own = await layOut();
  const detected = await detectCgroups(root, { selfCgroupFile: selfCgroup, fs: fakeKernel(false) });
  if (!('driver' in detected)) throw new Error(detected.reason);
  const group = await detected.driver.create('sbx-1-b', LIMITS);
  const dir = path.join(own, 'sbx-1-b');
  expect(existsSync(path.join(dir, 'memory.swap.max'))).toBe(false);
  expect(group.peakMemoryBytes()).toBe(0);
  for (const [current, peak] of [
    [100 * MiB, 100 * MiB],
    [300 * MiB, 300 * MiB],
    [200 * MiB, 300 * MiB],
  ]) {
    await writeFile(path.join(dir, 'memory.current'), `${current}\n`);
    expect(group.peakMemoryBytes()).toBe(peak);
  }
  // A process in the group is SIGKILLed (the stand-in's rmdir refuses while it lives).
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  const exited = once(child, 'exit');
  await writeFile(path.join(dir, 'cgroup.procs'), `${child.pid}\n`);
  await group.destroy();
  expect((await exited)[1]).toBe('SIGKILL');
  expect(existsSync(dir)).toBe(false);
});

test('a worker in the real root cgroup makes no leaf; one restarted in the leaf uses its parent', async () => {
  await layOut();
  await writeFile(selfCgroup, '0::/\n');
  const atRoot = await detectCgroups(root, { selfCgroupFile: selfCgroup, fs: fakeKernel(true) });
  expect('driver' in atRoot).toBe(true);
  expect(existsSync(path.join(root, 'testrun-worker'))).toBe(false);
  expect(read(path.join(root, 'cgroup.subtree_control'))).toBe('+memory +pids +cpu');

  const own = path.join(root, OWN);
  await writeFile(selfCgroup, `0::${OWN}/testrun-worker\n`);
  const restarted = await detectCgroups(root, { selfCgroupFile: selfCgroup, fs: fakeKernel(true) });
  if (!('driver' in restarted)) throw new Error(restarted.reason);
  await (await restarted.driver.create('sbx-1-c', LIMITS)).destroy();
  expect(read(path.join(own, 'cgroup.subtree_control'))).toBe('+memory +pids +cpu');
  expect(existsSync(path.join(own, 'testrun-worker', 'testrun-worker'))).toBe(false);
});

test("the groups a killed worker left are removed, a live worker's are not", async () => {
  const own = await layOut();
  const kernel = fakeKernel(true);
  const dead = spawnSync('true').pid;
  const live = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    await kernel.mkdir(path.join(own, `sbx-${dead}-left`));
    await kernel.mkdir(path.join(own, `sbx-${live.pid}-running`));
    expect('driver' in (await detectCgroups(root, { selfCgroupFile: selfCgroup, fs: kernel }))).toBe(true);
    expect(readdirSync(own).filter((name) => name.startsWith('sbx-'))).toEqual([`sbx-${live.pid}-running`]);
  } finally {
    live.kill('SIGKILL');
  }
});

describe('refusals, each naming what is missing and what an operator must do', () => {
  const detect = (kernel = fakeKernel(true)) => detectCgroups(root, { selfCgroupFile: selfCgroup, fs: kernel });
  const reason = async (kernel?: Kernel) => {
    const detected = await detect(kernel);
    return 'reason' in detected ? detected.reason : 'no refusal';
  };

  test('controllers the hierarchy does not offer', async () => {
    await layOut({ rootControllers: 'cpuset cpu io memory\n' });
    expect(await reason()).toBe(
      `the cgroup v2 controllers pids are not available at ${root} (its cgroup.controllers: cpuset cpu io memory): on a host they are held by cgroup v1 hierarchies or disabled on the kernel's command line; in a container, its runtime's cgroup does not delegate them`,
    );
  });

  test("controllers the parent does not enable for the worker's cgroup", async () => {
    const own = await layOut({ ownControllers: 'cpu io\n' });
    expect(await reason()).toMatch(
      `the cgroup v2 controllers memory, pids are not enabled for the worker's cgroup ${own}: enable them in ${path.dirname(own)}/cgroup.subtree_control (+memory +pids +cpu); the worker (root) needs its cgroup delegated to it and /sys/fs/cgroup writable: a privileged container on a cgroup v2 Kubernetes node`,
    );
  });

  test('a read-only cgroup mount, and a cgroup not delegated', async () => {
    await layOut();
    expect(await reason(fakeKernel(true, 'EROFS'))).toMatch(
      new RegExp(
        `^the cgroup2 mount at ${root} is read-only \\(a container that is not privileged\\): the worker \\(root\\) needs its cgroup delegated to it and /sys/fs/cgroup writable: a privileged container on a cgroup v2 Kubernetes node, docker run --privileged --cgroupns=private,`,
      ),
    );
    expect(await reason(fakeKernel(true, 'EACCES'))).toMatch(
      new RegExp(`^the worker's cgroup ${path.join(root, OWN)} is not delegated to it \\(EACCES\\): `),
    );
  });

  test('a worker outside the mounted cgroup namespace, or with no v2 group', async () => {
    await layOut();
    await writeFile(selfCgroup, '0::/../../system.slice/worker.service\n');
    expect(await reason()).toMatch(
      /^the worker's cgroup \/\.\.\/\.\.\/system\.slice\/worker\.service is outside the cgroup namespace mounted at /,
    );
    await writeFile(selfCgroup, '4:memory:/\n1:cpu:/\n');
    expect(await reason()).toBe(`${selfCgroup} names no cgroup v2 group of the worker`);
  });

  test('a group that cannot be made', async () => {
    const own = await layOut();
    await writeFile(path.join(own, 'testrun-worker'), '');
    expect(await reason()).toMatch(new RegExp(`^the worker's cgroup ${own} is not delegated to it \\(ENOTDIR\\)`));
    await rm(path.join(own, 'testrun-worker'));
    const kernel = fakeKernel(true);
    const made = kernel.mkdir;
    kernel.mkdir = (dir) =>
      path.basename(dir).startsWith('probe-') ? Promise.reject(new Error('EAGAIN: too many')) : made(dir);
    expect(await reason(kernel)).toBe(`cannot create a cgroup under ${own} (EAGAIN: too many)`);
  });
});
