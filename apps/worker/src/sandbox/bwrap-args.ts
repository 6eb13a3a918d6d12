import { lstatSync, readlinkSync } from 'node:fs';

/** Where the scratch directory appears inside the sandbox, and its working directory. */
const SANDBOX_WORKDIR = '/work';

/** What bubblewrap is given to build the sandbox's file system and namespaces (the environment: {@link envArgs}). */
export interface BwrapLayout {
  /** Host paths bound read-only at the same path (the Node runtime's directory, the bundle). */
  readOnlyBinds: readonly string[];
  /** The private writable directory, bound at {@link SANDBOX_WORKDIR}. */
  scratchDir: string;
  /** Size of the sandbox's /tmp (a tmpfs, charged to its memory group too). */
  tmpBytes: number;
  /** Further mounts as bubblewrap flags (the relay and the egress proxy's socket), made after /tmp. */
  mounts?: readonly string[];
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
    // The program's variables come on this descriptor (envArgs), never on bwrap's command line,
    // which every process of the host can read in /proc/<pid>/cmdline.
    '--args',
    String(ENV_ARGS_FD),
  ];
  return args;
}

/** The descriptor bwrap reads the program's `--setenv` arguments from. */
export const ENV_ARGS_FD = 3;

/** The program's environment as bwrap's `--setenv` arguments, NUL-separated, for {@link ENV_ARGS_FD}. */
export function envArgs(env: Readonly<Record<string, string>>): Buffer {
  const args: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid environment variable name ${name}`);
    if (value.includes('\0')) throw new Error(`the value of ${name} holds a NUL`);
    args.push('--setenv', name, value);
  }
  return Buffer.from(args.map((a) => `${a}\0`).join(''));
}
