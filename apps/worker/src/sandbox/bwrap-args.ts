import { lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** Where the scratch directory appears inside the sandbox, and its working directory. */
const SANDBOX_WORKDIR = '/work';

/** What bubblewrap is given to build the sandbox's file system and namespaces (all of it on a descriptor: {@link descriptorArgs}). */
export interface BwrapLayout {
  /** Host paths bound read-only at the same path (the Node runtime's directory, the bundle). */
  readOnlyBinds: readonly string[];
  /** The private writable directory, bound at {@link SANDBOX_WORKDIR}. */
  scratchDir: string;
  /** Size of the sandbox's /tmp (a tmpfs, charged to its memory group too). */
  tmpBytes: number;
  /** Size of its /dev/shm (a tmpfs as well: Chromium's shared memory without --disable-dev-shm-usage). */
  shmBytes: number;
  /** Further mounts as bubblewrap flags (the relay and the egress proxy's socket), made after /tmp. */
  mounts?: readonly string[];
}

/** The top-level directories that are symlinks into /usr on merged-/usr systems, or directories. */
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * Files of /etc a program may need: the loader's cache, the CA certificates, fontconfig's
 * configuration (Chromium renders text with it) and Debian's Chromium launcher settings
 * (/usr/bin/chromium is a script that reads /etc/chromium.d). Not /etc wholesale: no passwd, hosts, etc.
 */
const ETC_FILES = [
  '/etc/ld.so.cache',
  '/etc/ssl/certs',
  '/etc/ca-certificates',
  '/etc/nsswitch.conf',
  '/etc/fonts',
  '/etc/chromium.d',
  '/etc/chromium',
];

/**
 * The system's fontconfig caches (font names and metrics of /usr/share/fonts, nothing secret):
 * without them Chromium's fontconfig scans every font again and writes caches of its own under the
 * sandbox's home, for every sandbox.
 */
const SYSTEM_CACHES = ['/var/cache/fontconfig'];

/**
 * /etc/localtime as a symlink into /usr/share/zoneinfo, as the host has it (UTC where the host has
 * none, as the C library assumes). Without one, ICU in every Node and Chromium process of the
 * sandbox opened each of the ~3,700 files of /usr/share/zoneinfo to find out which zone it is in.
 */
export function localtimeArgs(localtime = '/etc/localtime'): string[] {
  try {
    const stat = lstatSync(localtime);
    if (stat.isSymbolicLink()) return ['--symlink', readlinkSync(localtime), '/etc/localtime'];
    if (stat.isFile()) return ['--ro-bind', localtime, '/etc/localtime'];
  } catch {
    // None on this host: UTC.
  }
  return ['--symlink', '/usr/share/zoneinfo/Etc/UTC', '/etc/localtime'];
}

/** Namespaces: all of --unshare-all's but the user namespace (see {@link bwrapArgs}). */
const UNSHARE = ['--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try'];
/** What setpriv needs to change the user and empty the bounding set; the program has none of them. */
const DROP_CAPS = ['CAP_SETUID', 'CAP_SETGID', 'CAP_SETPCAP'];

/** The namespaces and capabilities part of {@link bwrapArgs} (also what the support probe runs). */
export function namespaceArgs(): string[] {
  return [
    ...UNSHARE,
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    ...DROP_CAPS.flatMap((cap) => ['--cap-add', cap]),
  ];
}

function systemDirArgs(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    try {
      const stat = lstatSync(dir);
      if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
      else if (stat.isDirectory()) args.push('--ro-bind', dir, dir);
    } catch {
      // Not on this system.
    }
  }
  return args;
}

/**
 * bubblewrap's flags. Every namespace new but the user namespace (network: loopback only; PID: its
 * own /proc; IPC, UTS, cgroup), its own session (no TIOCSTI into the worker's terminal), gone with
 * the worker. Of root's capabilities, bubblewrap's init and the relay keep only what
 * {@link dropPrivileges} needs to make the program a user of its own: a user namespace made by root
 * would map the program's uid to the host's root, where a host uid of its own is no one. The root is an empty tmpfs holding only /usr and the system directories read-only, a few
 * files of /etc, the given read-only binds, a fresh /dev and /proc, a size-limited /tmp and the
 * scratch directory: nothing of the worker's /work, /root, /home or /tmp.
 */
export function bwrapArgs(layout: BwrapLayout): string[] {
  const hidden = layout.readOnlyBinds.find((dir) => dir === SANDBOX_WORKDIR || dir.startsWith(`${SANDBOX_WORKDIR}/`));
  if (hidden !== undefined)
    throw new Error(`${hidden} cannot be bound: ${SANDBOX_WORKDIR} is the scratch directory's place`);
  const args = [
    ...namespaceArgs(),
    '--hostname',
    'sandbox',
    '--ro-bind',
    '/usr',
    '/usr',
    ...systemDirArgs(),
    ...ETC_FILES.flatMap((file) => ['--ro-bind-try', file, file]),
    ...localtimeArgs(),
    ...SYSTEM_CACHES.flatMap((dir) => ['--ro-bind-try', dir, dir]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // Writable by everyone, sticky, as on a host: the program is not root.
    '--perms',
    '1777',
    '--size',
    String(layout.tmpBytes),
    '--tmpfs',
    '/tmp',
    '--perms',
    '1777',
    '--size',
    String(layout.shmBytes),
    '--tmpfs',
    '/dev/shm',
    // After /tmp, which would otherwise hide a bind below it.
    ...layout.readOnlyBinds.flatMap((dir) => ['--ro-bind', dir, dir]),
    ...(layout.mounts ?? []),
    '--bind',
    layout.scratchDir,
    SANDBOX_WORKDIR,
    '--chdir',
    SANDBOX_WORKDIR,
    '--clearenv',
    // The seccomp filter (seccomp.ts), loaded just before the relay or setpriv starts.
    '--seccomp',
    String(SECCOMP_FD),
  ];
  return withParents(args);
}

/**
 * The program's command-line prefix inside: it becomes `uid`:`gid` (no supplementary groups) with
 * no capability, none inheritable and an empty bounding set; bubblewrap's `no_new_privs` keeps it so.
 */
export function dropPrivileges(uid: number, gid: number): string[] {
  return [
    '/usr/bin/setpriv',
    `--reuid=${uid}`,
    `--regid=${gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
  ];
}

/** Binds whose target is the flag's second operand. */
const BIND_FLAGS = new Set(['--ro-bind', '--ro-bind-try', '--bind', '--bind-try']);

/**
 * Inserts `--perms 0755 --dir` for every missing ancestor of a bind's target before the bind:
 * bubblewrap running as root makes them 0700, which the program (not root) could not traverse.
 */
function withParents(args: readonly string[]): string[] {
  const made = new Set(['/', '/usr', '/proc', '/dev', '/tmp', ...SYSTEM_DIRS]);
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const flag = args[i] as string;
    const target = args[i + 2];
    if (BIND_FLAGS.has(flag) && target !== undefined) {
      const parts = path.posix.normalize(target).split('/').filter(Boolean);
      for (let depth = 1; depth < parts.length; depth += 1) {
        const dir = `/${parts.slice(0, depth).join('/')}`;
        if (made.has(dir) || dir.startsWith('/usr/')) continue;
        made.add(dir);
        out.push('--perms', '0755', '--dir', dir);
      }
      out.push(flag, args[i + 1] as string, target);
      i += 2;
    } else out.push(flag);
  }
  return out;
}

/** The descriptor bwrap reads its flags and the program's `--setenv` arguments from (`bwrap --args 3 -- <program>`). */
export const ENV_ARGS_FD = 3;
/** The descriptor bwrap reads the seccomp filter from (it closes both before the program starts). */
export const SECCOMP_FD = 4;

/**
 * bubblewrap's flags (`bwrapArgs`) and the program's environment as its `--setenv` arguments,
 * NUL-separated, for {@link ENV_ARGS_FD}: never on its command line. Every process of the host can
 * read that in /proc/<pid>/cmdline, and so can every process of the sandbox, whose init is a fork of
 * bubblewrap (/proc/1/cmdline): there it holds no variable and no host path, only `--args 3` and the program.
 */
export function descriptorArgs(flags: readonly string[], env: Readonly<Record<string, string>>): Buffer {
  const args: string[] = [...flags];
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid environment variable name ${name}`);
    if (value.includes('\0')) throw new Error(`the value of ${name} holds a NUL`);
    args.push('--setenv', name, value);
  }
  return Buffer.from(args.map((a) => `${a}\0`).join(''));
}
