import { REFUSED, SYSCALL_TABLES, type RefusedName, type SyscallTable } from './seccomp-tables';

/*
 * The sandbox's seccomp filter: a classic-BPF program (an array of struct sock_filter) that
 * bubblewrap loads with `--seccomp <fd>` just before it starts the program, so it holds for the
 * relay, setpriv, the program and everything they start. Everything is allowed but what
 * seccomp-tables.ts's REFUSED names (EPERM), a clone asking for a new namespace (EPERM), clone3
 * (ENOSYS: the C library then falls back to clone, whose flags the filter can read, as Docker does),
 * a personality other than the ones Docker allows (EPERM) and AF_VSOCK sockets (EPERM). A call of
 * another architecture's ABI (x86's 32-bit int 0x80, x32) kills the process: the numbers mean other
 * calls there. The filter reads only the number and the architecture for every call but clone,
 * personality and socket, so the kernel's seccomp cache (Linux 5.11) answers the other allowed
 * calls without running it.
 */

/** struct seccomp_data's fields, as byte offsets. */
const NR = 0;
const ARCH = 4;
/** The low 32 bits of argument `i` (every argument the filter reads is an int, or its flags are). */
const argLow = (i: number) => 16 + 8 * i;

/** The opcodes the filter uses (linux/bpf_common.h). */
export const BPF = {
  /** A = the 32-bit word at k of seccomp_data. */
  LD_W_ABS: 0x20,
  /** if A == k: jump jt, else jf. */
  JEQ_K: 0x15,
  /** if A >= k (unsigned). */
  JGE_K: 0x35,
  /** if A & k. */
  JSET_K: 0x45,
  /** return k. */
  RET_K: 0x06,
} as const;

/** What the filter returns (linux/seccomp.h). */
export const SECCOMP_RET = {
  KILL_PROCESS: 0x80000000,
  ERRNO: 0x00050000,
  ALLOW: 0x7fff0000,
} as const;
const EPERM = 1;
const ENOSYS = 38;

/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET, Docker's mask (CLONE_NEWTIME has no room in clone's flags). */
export const CLONE_NAMESPACE_FLAGS = 0x7e020000;
/** PER_LINUX, PER_LINUX32, UNAME26, UNAME26 | PER_LINUX32 and the query 0xffffffff, as Docker allows. */
export const ALLOWED_PERSONALITIES = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff] as const;
const AF_VSOCK = 40;

/** One struct sock_filter. */
export interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

const stmt = (code: number, k: number): Instruction => ({ code, jt: 0, jf: 0, k });
const jump = (code: number, k: number, jt: number, jf: number): Instruction => ({ code, jt, jf, k });
const load = (offset: number) => stmt(BPF.LD_W_ABS, offset);
const ret = (value: number) => stmt(BPF.RET_K, value);
const errno = (code: number) => ret(SECCOMP_RET.ERRNO | code);

/**
 * A block for one call whose argument decides: if the number is `nr`, `body` (which ends in returns
 * only); otherwise on past it, with the number still in A.
 */
function inspect(nr: number | undefined, body: Instruction[]): Instruction[] {
  if (nr === undefined) return [];
  return [jump(BPF.JEQ_K, nr, 0, body.length), ...body];
}

/** `argument 0 & mask` refused with `refusal`, allowed otherwise. */
function refuseIfFlags(mask: number, refusal: Instruction): Instruction[] {
  return [load(argLow(0)), jump(BPF.JSET_K, mask, 0, 1), refusal, ret(SECCOMP_RET.ALLOW)];
}

/** Argument 0 allowed when one of `values`, refused with EPERM otherwise. */
function allowOnly(values: readonly number[]): Instruction[] {
  const checks = values.map((value, i) => jump(BPF.JEQ_K, value, values.length - i, 0));
  return [load(argLow(0)), ...checks, errno(EPERM), ret(SECCOMP_RET.ALLOW)];
}

/** The filter's instructions for `table`. */
export function filterProgram(table: SyscallTable): Instruction[] {
  const { numbers } = table;
  const refused = Object.values(REFUSED)
    .flat()
    .map((name: RefusedName) => numbers[name])
    .filter((nr): nr is number => nr !== undefined)
    .sort((a, b) => a - b);
  return [
    load(ARCH),
    jump(BPF.JEQ_K, table.audit, 1, 0),
    ret(SECCOMP_RET.KILL_PROCESS),
    load(NR),
    ...(table.x32Bit === undefined ? [] : [jump(BPF.JGE_K, table.x32Bit, 0, 1), ret(SECCOMP_RET.KILL_PROCESS)]),
    ...refused.flatMap((nr) => [jump(BPF.JEQ_K, nr, 0, 1), errno(EPERM)]),
    ...inspect(numbers.clone3, [errno(ENOSYS)]),
    ...inspect(numbers.clone, refuseIfFlags(CLONE_NAMESPACE_FLAGS, errno(EPERM))),
    ...inspect(numbers.personality, allowOnly(ALLOWED_PERSONALITIES)),
    ...inspect(numbers.socket, [
      load(argLow(0)),
      jump(BPF.JEQ_K, AF_VSOCK, 0, 1),
      errno(EPERM),
      ret(SECCOMP_RET.ALLOW),
    ]),
    ret(SECCOMP_RET.ALLOW),
  ];
}

/** The instructions as the kernel reads them: 8 bytes each, in the machine's (little-endian) order. */
function encode(program: readonly Instruction[]): Buffer {
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(({ code, jt, jf, k }, i) => {
    if (jt > 255 || jf > 255) throw new Error(`seccomp filter: instruction ${i} jumps too far`);
    bytes.writeUInt16LE(code, i * 8);
    bytes.writeUInt8(jt, i * 8 + 2);
    bytes.writeUInt8(jf, i * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return bytes;
}

/** Why the filter cannot be made for `arch`, or undefined when it can. */
export function seccompUnsupported(arch: string = process.arch): string | undefined {
  if (SYSCALL_TABLES[arch] !== undefined) return undefined;
  return `the sandbox's seccomp filter has no system call table for this architecture (${arch}); it knows ${Object.keys(SYSCALL_TABLES).join(' and ')}`;
}

const built = new Map<string, Buffer>();

/** The filter for `arch` (Node's `process.arch`), as bubblewrap's `--seccomp` reads it; throws for an unknown one. */
export function seccompFilter(arch: string = process.arch): Buffer {
  const table = SYSCALL_TABLES[arch];
  if (table === undefined) throw new Error(seccompUnsupported(arch));
  let filter = built.get(arch);
  if (filter === undefined) {
    filter = encode(filterProgram(table));
    built.set(arch, filter);
  }
  return filter;
}
