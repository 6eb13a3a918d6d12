import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { killAndRemove, killEach, pidsIn } from '../../../apps/worker/src/sandbox/cgroups';
import { detectCgroups } from '../../../apps/worker/src/sandbox/cgroups-detect';
import { KERNEL_FS, removalOf } from '../../../apps/worker/src/sandbox/cgroups-v2';

/*
 * What of the cgroup v2 driver this machine's kernel can show: its cgroup2 hierarchy
 * (/sys/fs/cgroup/unified, beside the v1 ones) has no memory, pids or cpu controller, since v1 holds
 * them. The refusal is read from the real mount, and a real group there is emptied and removed the
 * two ways the driver does it (cgroup.kill, or each pid of cgroup.procs), with processes forking
 * inside. Limits, their events and the worker's leaf need the controllers: cgroups-v2.test.ts.
 */

const UNIFIED = '/sys/fs/cgroup/unified';
const hasUnified = existsSync(path.join(UNIFIED, 'cgroup.controllers'));
if (!hasUnified) console.warn(`the real cgroup v2 checks are skipped: no cgroup2 hierarchy at ${UNIFIED}`);
const testIfUnified = hasUnified ? test : test.skip;

testIfUnified('a cgroup2 mount without memory, pids and cpu is refused, naming them', async () => {
  const offered = readFileSync(path.join(UNIFIED, 'cgroup.controllers'), 'utf8').split(/\s+/).filter(Boolean);
  const missing = ['memory', 'pids', 'cpu'].filter((c) => !offered.includes(c));
  expect(missing.length).toBeGreaterThan(0); // v1 holds them on this machine
  const detected = await detectCgroups(UNIFIED);
  expect('reason' in detected && detected.reason).toBe(
    `the cgroup v2 controllers ${missing.join(', ')} are not available at ${UNIFIED} (its cgroup.controllers: ${offered.join(' ') || 'none'}): on a host they are held by cgroup v1 hierarchies or disabled on the kernel's command line; in a container, its runtime's cgroup does not delegate them`,
  );
});

/** A real group holding a shell that entered it before starting two more processes. */
async function groupWithProcesses(name: string) {
  const dir = path.join(UNIFIED, `${name}-${process.pid}`);
  await KERNEL_FS.mkdir(dir);
  const procs = path.join(dir, 'cgroup.procs');
  const shell = spawn('/bin/sh', ['-c', `echo $$ > ${procs} && exec /bin/sh -c 'sleep 60 & sleep 60 & wait'`], {
    stdio: 'ignore',
  });
  const exited = once(shell, 'exit');
  for (let tries = 0; tries < 500 && (await pidsIn(dir)).length < 3; tries += 1) await sleep(10);
  expect(await pidsIn(dir)).toHaveLength(3);
  return { dir, exited };
}

testIfUnified('a real group is emptied with cgroup.kill and removed', async () => {
  const { dir, exited } = await groupWithProcesses('testrun-kill-test');
  try {
    expect(existsSync(path.join(dir, 'cgroup.kill'))).toBe(true); // Linux 5.14 and later
    await killAndRemove([dir], removalOf(KERNEL_FS, dir));
    expect(existsSync(dir)).toBe(false);
    expect((await exited)[1]).toBe('SIGKILL');
  } finally {
    await killAndRemove([dir]).catch(() => undefined); // after a failure: nothing left behind
  }
});

testIfUnified('a real group is emptied by killing each pid and removed', async () => {
  const { dir, exited } = await groupWithProcesses('testrun-killeach-test');
  try {
    // The removal of a kernel without cgroup.kill.
    await killAndRemove([dir], { kill: killEach, remove: KERNEL_FS.rmdir });
    expect(existsSync(dir)).toBe(false);
    expect((await exited)[1]).toBe('SIGKILL');
  } finally {
    await killAndRemove([dir]).catch(() => undefined); // after a failure: nothing left behind
  }
});
