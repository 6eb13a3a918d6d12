import { lstatSync, readlinkSync } from 'node:fs';

/** Where the scratch directory appears inside the sandbox, and its working directory. */
const SANDBOX_WORKDIR = '/work';

/** What bubblewrap is given to build the sandbox's file system, namespaces and environment. */
export interface BwrapLayout {
  /** Host paths bound read-only at the same path (the Node runtime's directory, the bundle). */
  readOnlyBinds: readonly string[];
  /** The private writable directory, bound at {@link SANDBOX_WORKDIR}. */
  scratchDir: string;
  /** Size of the sandbox's /tmp (a tmpfs, charged to its memory group too). */
  tmpBytes: number;
  /** Further mounts as bubblewrap flags (the relay and the egress proxy's socket), made after /tmp. */
  mounts?: readonly string[];
  /** The whole environment the program gets. */
  env: Readonly<Record<string, string>>;
}

/** The top-level directories that are symlinks into /usr on merged-/usr systems, or directories. */
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** Files of /etc a program may need: the loader's cache and the CA certificates. Not /etc wholesale. */
const ETC_FILES = ['/etc/ld.so.cache', '/etc/ssl/certs', '/etc/ca-certificates', '/etc/nsswitch.conf'];

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
 * bubblewrap's flags. Every namespace new (network: loopback only; PID: its own /proc; IPC, UTS,
 * cgroup), no capabilities, its own session (no TIOCSTI into the worker's terminal), gone with the
 * worker. The root is an empty tmpfs holding only /usr and the system directories read-only, a few
 * files of /etc, the given read-only binds, a fresh /dev and /proc, a size-limited /tmp and the
 * scratch directory: nothing of the worker's /work, /root, /home or /tmp.
 */
export function bwrapArgs(layout: BwrapLayout): string[] {
  const hidden = layout.readOnlyBinds.find((dir) => dir === SANDBOX_WORKDIR || dir.startsWith(`${SANDBOX_WORKDIR}/`));
  if (hidden !== undefined)
    throw new Error(`${hidden} cannot be bound: ${SANDBOX_WORKDIR} is the scratch directory's place`);
  const args = [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--hostname',
    'sandbox',
    '--ro-bind',
    '/usr',
    '/usr',
    ...systemDirArgs(),
    ...ETC_FILES.flatMap((file) => ['--ro-bind-try', file, file]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(layout.tmpBytes),
    '--tmpfs',
    '/tmp',
    // After /tmp, which would otherwise hide a bind below it.
    ...layout.readOnlyBinds.flatMap((dir) => ['--ro-bind', dir, dir]),
    ...(layout.mounts ?? []),
    '--bind',
    layout.scratchDir,
    SANDBOX_WORKDIR,
    '--chdir',
    SANDBOX_WORKDIR,
    '--clearenv',
  ];
  for (const [name, value] of Object.entries(layout.env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid environment variable name ${name}`);
    args.push('--setenv', name, value);
  }
  return args;
}
