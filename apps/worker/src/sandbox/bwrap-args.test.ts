import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bwrapArgs, dropPrivileges, ENV_ARGS_FD, localtimeArgs, SECCOMP_FD } from './bwrap-args';

const layout = {
  readOnlyBinds: ['/tmp/runs/r1/bundle'],
  scratchDir: '/var/tmp/scratch-1',
  tmpBytes: 1024,
  shmBytes: 2048,
  mounts: ['--ro-bind', '/srv/pw/playwright-core', '/node_modules/playwright-core'],
};

test('no user namespace (root would be mapped to the host root), only the capabilities setpriv needs', () => {
  const args = bwrapArgs(layout);
  expect(args).not.toContain('--unshare-all');
  expect(args).not.toContain('--unshare-user');
  expect(args).toEqual(expect.arrayContaining(['--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts']));
  const added = args.flatMap((arg, i) => (arg === '--cap-add' ? [args[i + 1]] : []));
  expect(added).toEqual(['CAP_SETUID', 'CAP_SETGID', 'CAP_SETPCAP']);
  expect(args.indexOf('--cap-drop')).toBeLessThan(args.indexOf('--cap-add'));
});

test("every bind target's missing parents are made 0755 before it, once", () => {
  const args = bwrapArgs(layout).join(' ');
  expect(args).toContain('--perms 0755 --dir /tmp/runs --perms 0755 --dir /tmp/runs/r1 --ro-bind /tmp/runs/r1/bundle');
  expect(args).toContain(
    '--perms 0755 --dir /node_modules --ro-bind /srv/pw/playwright-core /node_modules/playwright-core',
  );
  expect(args).toContain('--perms 0755 --dir /etc --ro-bind-try /etc/ld.so.cache /etc/ld.so.cache');
  expect(args.match(/--dir \/etc /g)).toHaveLength(1);
  // /tmp and /dev/shm are sized, writable by everyone and sticky; the scratch directory is /work.
  expect(args).toContain('--perms 1777 --size 1024 --tmpfs /tmp');
  expect(args).toContain('--perms 1777 --size 2048 --tmpfs /dev/shm');
  expect(args).toContain('--bind /var/tmp/scratch-1 /work --chdir /work');
});

test('nothing can be bound under /work', () => {
  expect(() => bwrapArgs({ ...layout, readOnlyBinds: ['/work/repo'] })).toThrow(/scratch directory's place/);
});

test('the program becomes a user of its own with no capability left', () => {
  expect(dropPrivileges(1_000_001, 1_000_001)).toEqual([
    '/usr/bin/setpriv',
    '--reuid=1000001',
    '--regid=1000001',
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
  ]);
});

test("/etc/localtime is the host's zone: its symlink, its file, or UTC where it has none", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'testrun-localtime-'));
  try {
    symlinkSync('/usr/share/zoneinfo/Europe/Berlin', path.join(dir, 'link'));
    expect(localtimeArgs(path.join(dir, 'link'))).toEqual([
      '--symlink',
      '/usr/share/zoneinfo/Europe/Berlin',
      '/etc/localtime',
    ]);
    writeFileSync(path.join(dir, 'file'), 'TZif');
    expect(localtimeArgs(path.join(dir, 'file'))).toEqual(['--ro-bind', path.join(dir, 'file'), '/etc/localtime']);
    expect(localtimeArgs(path.join(dir, 'none'))).toEqual([
      '--symlink',
      '/usr/share/zoneinfo/Etc/UTC',
      '/etc/localtime',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the environment and the seccomp filter come on descriptors 3 and 4, never on the command line', () => {
  const args = bwrapArgs(layout).join(' ');
  expect(args).toContain(`--clearenv --seccomp ${SECCOMP_FD}`);
  expect([ENV_ARGS_FD, SECCOMP_FD]).toEqual([3, 4]);
});
