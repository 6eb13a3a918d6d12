/*
 * What the sandbox's seccomp filter (seccomp.ts) refuses, by name, and each name's number on the
 * architectures it knows. Anchored on Docker's default profile: what it refuses a container without
 * the capability, less what is harmless to a process of its own (NUMA policy of its own memory),
 * plus io_uring (its rings bypass seccomp and have been a steady source of kernel bugs), the
 * namespaced-by-nothing AF_VSOCK, and the x32 and 32-bit ABIs (killed, see seccomp.ts).
 */

/** Refused with EPERM, grouped by why. */
export const REFUSED = {
  /** New namespaces (a user namespace gives its creator every capability inside it) and joining others. */
  namespaces: ['unshare', 'setns'],
  /** Mounting, in any namespace: the sandbox's file system is bubblewrap's, made before the program. */
  mounts: [
    'mount',
    'umount2',
    'pivot_root',
    'chroot',
    'move_mount',
    'open_tree',
    'open_tree_attr',
    'fsopen',
    'fsconfig',
    'fsmount',
    'fspick',
    'mount_setattr',
  ],
  /** Reading, writing or steering another process's memory, descriptors or pages. */
  otherProcesses: [
    'ptrace',
    'process_vm_readv',
    'process_vm_writev',
    'kcmp',
    'pidfd_getfd',
    'process_madvise',
    'migrate_pages',
    'move_pages',
  ],
  /** Large kernel attack surface no test needs: eBPF, perf, userfaultfd, io_uring, keyrings, handles, logs. */
  kernelSurface: [
    'bpf',
    'perf_event_open',
    'userfaultfd',
    'io_uring_setup',
    'io_uring_enter',
    'io_uring_register',
    'keyctl',
    'add_key',
    'request_key',
    'fanotify_init',
    'lookup_dcookie',
    'open_by_handle_at',
    'name_to_handle_at',
    'quotactl',
    'quotactl_fd',
    'syslog',
  ],
  /** Kernel modules and replacing the kernel. */
  modules: [
    'init_module',
    'finit_module',
    'delete_module',
    'kexec_load',
    'kexec_file_load',
    'create_module',
    'get_kernel_syms',
    'query_module',
  ],
  /** The machine's clocks. */
  clocks: ['clock_settime', 'clock_adjtime', 'settimeofday', 'adjtimex'],
  /** The machine itself, its I/O ports and obsolete calls. */
  machine: [
    'reboot',
    'swapon',
    'swapoff',
    'acct',
    'sethostname',
    'setdomainname',
    'vhangup',
    'iopl',
    'ioperm',
    'nfsservctl',
    'uselib',
    'ustat',
    'sysfs',
    '_sysctl',
  ],
} as const;

export type RefusedName = (typeof REFUSED)[keyof typeof REFUSED][number];
/** The calls the filter looks into (their arguments) rather than refusing outright. */
type InspectedName = 'clone' | 'clone3' | 'personality' | 'socket';

/** An architecture's numbers: absent where the call does not exist there. */
export interface SyscallTable {
  /** AUDIT_ARCH_* as seccomp_data.arch reports it. */
  audit: number;
  /** x86_64: calls of the x32 ABI carry this bit in their number. */
  x32Bit?: number;
  numbers: Partial<Record<RefusedName | InspectedName, number>>;
}

/** Calls added since Linux 5.1 have one number on every architecture. */
const GENERIC_SINCE_5_1: SyscallTable['numbers'] = {
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  clone3: 435,
  pidfd_getfd: 438,
  process_madvise: 440,
  mount_setattr: 442,
  quotactl_fd: 443,
  open_tree_attr: 467,
};

const X86_64: SyscallTable = {
  audit: 0xc000003e,
  x32Bit: 0x40000000,
  numbers: {
    clone: 56,
    socket: 41,
    uselib: 134,
    personality: 135,
    ustat: 136,
    sysfs: 139,
    vhangup: 153,
    pivot_root: 155,
    _sysctl: 156,
    adjtimex: 159,
    chroot: 161,
    acct: 163,
    settimeofday: 164,
    mount: 165,
    umount2: 166,
    swapon: 167,
    swapoff: 168,
    reboot: 169,
    sethostname: 170,
    setdomainname: 171,
    iopl: 172,
    ioperm: 173,
    create_module: 174,
    init_module: 175,
    delete_module: 176,
    get_kernel_syms: 177,
    query_module: 178,
    quotactl: 179,
    nfsservctl: 180,
    ptrace: 101,
    syslog: 103,
    lookup_dcookie: 212,
    clock_settime: 227,
    kexec_load: 246,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
    migrate_pages: 256,
    unshare: 272,
    move_pages: 279,
    perf_event_open: 298,
    fanotify_init: 300,
    name_to_handle_at: 303,
    open_by_handle_at: 304,
    clock_adjtime: 305,
    setns: 308,
    process_vm_readv: 310,
    process_vm_writev: 311,
    kcmp: 312,
    finit_module: 313,
    kexec_file_load: 320,
    bpf: 321,
    userfaultfd: 323,
    ...GENERIC_SINCE_5_1,
  },
};

/** AArch64 uses the generic table (asm-generic/unistd.h). */
const AARCH64: SyscallTable = {
  audit: 0xc00000b7,
  numbers: {
    lookup_dcookie: 18,
    umount2: 39,
    mount: 40,
    pivot_root: 41,
    nfsservctl: 42,
    chroot: 51,
    vhangup: 58,
    quotactl: 60,
    acct: 89,
    personality: 92,
    unshare: 97,
    kexec_load: 104,
    init_module: 105,
    delete_module: 106,
    clock_settime: 112,
    syslog: 116,
    ptrace: 117,
    reboot: 142,
    sethostname: 161,
    setdomainname: 162,
    settimeofday: 170,
    adjtimex: 171,
    socket: 198,
    add_key: 217,
    request_key: 218,
    keyctl: 219,
    clone: 220,
    swapon: 224,
    swapoff: 225,
    migrate_pages: 238,
    move_pages: 239,
    perf_event_open: 241,
    fanotify_init: 262,
    name_to_handle_at: 264,
    open_by_handle_at: 265,
    clock_adjtime: 266,
    setns: 268,
    process_vm_readv: 270,
    process_vm_writev: 271,
    kcmp: 272,
    finit_module: 273,
    bpf: 280,
    userfaultfd: 282,
    kexec_file_load: 294,
    ...GENERIC_SINCE_5_1,
  },
};

/** The architectures the filter knows, by Node's `process.arch`. */
export const SYSCALL_TABLES: Readonly<Record<string, SyscallTable>> = { x64: X86_64, arm64: AARCH64 };
