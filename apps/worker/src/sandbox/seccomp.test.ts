import { REFUSED, SYSCALL_TABLES, type SyscallTable } from './seccomp-tables';
import {
  ALLOWED_PERSONALITIES,
  BPF,
  CLONE_NAMESPACE_FLAGS,
  filterProgram,
  seccompFilter,
  seccompUnsupported,
  SECCOMP_RET,
  type Instruction,
} from './seccomp';

/*
 * The filter's program run through a small classic-BPF interpreter, as the kernel would run it on
 * a call's struct seccomp_data: what each call gets. test/worker/sandbox/seccomp.test.ts proves
 * the same against the kernel, inside the real sandbox.
 */

const AUDIT_ARCH_X86_64 = 0xc000003e;
const AUDIT_ARCH_I386 = 0x40000003;
const AUDIT_ARCH_AARCH64 = 0xc00000b7;
const EPERM = SECCOMP_RET.ERRNO | 1;
const ENOSYS = SECCOMP_RET.ERRNO | 38;
const { ALLOW, KILL_PROCESS: KILL } = SECCOMP_RET;

interface Call {
  nr: number;
  arch?: number;
  /** Each argument's 64 bits, as a bigint. */
  args?: bigint[];
}

/** The 32-bit word at `offset` of struct seccomp_data (little-endian) for `call`. */
function word(call: Call, arch: number, offset: number): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(call.nr, 0);
  data.writeUInt32LE(call.arch ?? arch, 4);
  (call.args ?? []).forEach((arg, i) => data.writeBigUInt64LE(BigInt.asUintN(64, arg), 16 + 8 * i));
  if (offset % 4 !== 0 || offset + 4 > data.length) throw new Error(`load out of seccomp_data at ${offset}`);
  return data.readUInt32LE(offset);
}

/** Runs `program` on `call`; throws on an unknown opcode or a jump off its end, as the kernel's checker refuses them. */
function run(program: readonly Instruction[], call: Call, arch = AUDIT_ARCH_X86_64): number {
  let a = 0;
  for (let pc = 0; pc < program.length; pc += 1) {
    const { code, jt, jf, k } = program[pc] as Instruction;
    const branch = (taken: boolean) => (pc += taken ? jt : jf);
    if (code === BPF.LD_W_ABS) a = word(call, arch, k);
    else if (code === BPF.JEQ_K) branch(a === k >>> 0);
    else if (code === BPF.JGE_K) branch(a >>> 0 >= k >>> 0);
    else if (code === BPF.JSET_K) branch((a & k) !== 0);
    else if (code === BPF.RET_K) return k >>> 0;
    else throw new Error(`unknown opcode ${code} at ${pc}`);
  }
  throw new Error('the program ran off its end');
}

function table(arch: string): SyscallTable {
  const found = SYSCALL_TABLES[arch];
  if (found === undefined) throw new Error(`no table for ${arch}`);
  return found;
}

const x64 = filterProgram(table('x64'));
const arm64 = filterProgram(table('arm64'));

test('another ABI is killed on x86_64: 32-bit calls (int 0x80) and x32 calls', () => {
  expect(run(x64, { nr: 39 })).toBe(ALLOW); // getpid
  expect(run(x64, { nr: 20, arch: AUDIT_ARCH_I386 })).toBe(KILL);
  expect(run(x64, { nr: 0x40000000 | 39 })).toBe(KILL);
  expect(run(x64, { nr: 0x40000000 | 272 })).toBe(KILL);
  expect(run(x64, { nr: 39, arch: AUDIT_ARCH_AARCH64 })).toBe(KILL);
  expect(run(arm64, { nr: 172 }, AUDIT_ARCH_AARCH64)).toBe(ALLOW); // getpid
  expect(run(arm64, { nr: 172, arch: AUDIT_ARCH_X86_64 }, AUDIT_ARCH_AARCH64)).toBe(KILL);
});

test('the calls the issue names are refused with EPERM (x86_64 numbers)', () => {
  const named: Record<string, number> = {
    unshare: 272,
    setns: 308,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    chroot: 161,
    ptrace: 101,
    process_vm_readv: 310,
    bpf: 321,
    keyctl: 250,
    add_key: 248,
    perf_event_open: 298,
    init_module: 175,
    finit_module: 313,
    kexec_load: 246,
    clock_settime: 227,
    settimeofday: 164,
    userfaultfd: 323,
    io_uring_setup: 425,
    fsopen: 430,
    open_tree_attr: 467,
  };
  for (const [name, nr] of Object.entries(named)) expect([name, run(x64, { nr })]).toEqual([name, EPERM]);
});

test.each(['x64', 'arm64'])(
  '%s: every refused call that exists there gets EPERM, and nothing else of the table',
  (arch) => {
    const { numbers, audit } = table(arch);
    const program = arch === 'x64' ? x64 : arm64;
    const refused = new Set(
      Object.values(REFUSED)
        .flat()
        .map((name) => numbers[name]),
    );
    for (const nr of refused) if (nr !== undefined) expect(run(program, { nr }, audit)).toBe(EPERM);
    // Everything else below 470 with arguments of 0: allowed (clone3 aside).
    for (let nr = 0; nr < 470; nr += 1) {
      if (refused.has(nr) || nr === numbers.clone3) continue;
      expect([nr, run(program, { nr, args: [0n] }, audit)]).toEqual([nr, ALLOW]);
    }
  },
);

test("what setpriv needs to become the sandbox's user stays allowed", () => {
  // setresuid, setresgid, setgroups, capget, capset, prctl, execve.
  for (const nr of [117, 119, 116, 125, 126, 157, 59]) expect(run(x64, { nr })).toBe(ALLOW);
});

test('clone: a new namespace of any kind is refused; processes and threads are not', () => {
  const clone = (flags: bigint) => run(x64, { nr: 56, args: [flags] });
  expect(clone(0x11n)).toBe(ALLOW); // SIGCHLD: fork()
  expect(clone(0x3d0f00n)).toBe(ALLOW); // pthread_create's flags
  expect(clone(0x01200011n)).toBe(ALLOW); // fork() with CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID
  for (let bit = 0; bit < 32; bit += 1) {
    const flag = 1 << bit;
    if ((CLONE_NAMESPACE_FLAGS & flag) === 0) continue;
    expect(clone(BigInt(flag >>> 0) | 0x11n)).toBe(EPERM);
  }
  expect(clone(0x10000000n)).toBe(EPERM); // CLONE_NEWUSER
  expect(clone(0x40000000n)).toBe(EPERM); // CLONE_NEWNET
  // The kernel reads the low 32 bits of clone's flags only.
  expect(clone(0x10000000n << 32n)).toBe(ALLOW);
  expect(run(arm64, { nr: 220, args: [0x10000011n] }, AUDIT_ARCH_AARCH64)).toBe(EPERM);
});

test('clone3 answers ENOSYS, so the C library falls back to clone', () => {
  expect(run(x64, { nr: 435, args: [0n, 88n] })).toBe(ENOSYS);
  expect(run(arm64, { nr: 435 }, AUDIT_ARCH_AARCH64)).toBe(ENOSYS);
});

test("personality: Docker's values only", () => {
  const personality = (value: bigint) => run(x64, { nr: 135, args: [value] });
  for (const value of ALLOWED_PERSONALITIES) expect(personality(BigInt(value))).toBe(ALLOW);
  expect(personality(0x0040000n)).toBe(EPERM); // ADDR_NO_RANDOMIZE
  expect(personality(0x0400000n)).toBe(EPERM); // READ_IMPLIES_EXEC
  expect(personality(0x0000001n)).toBe(EPERM);
});

test('socket: AF_VSOCK is refused, the others are not', () => {
  const socket = (domain: bigint) => run(x64, { nr: 41, args: [domain, 1n, 0n] });
  expect(socket(40n)).toBe(EPERM);
  for (const domain of [1n, 2n, 10n, 16n, 17n]) expect(socket(domain)).toBe(ALLOW);
});

test("the encoded filter is struct sock_filter's layout, and an unknown architecture is refused by name", () => {
  const bytes = seccompFilter('x64');
  expect(bytes.length).toBe(x64.length * 8);
  // BPF_LD|BPF_W|BPF_ABS of seccomp_data.arch, then the architecture's test.
  expect(bytes.subarray(0, 16).toString('hex')).toBe('2000000004000000' + '15000100' + '3e0000c0');
  expect(x64.length).toBeLessThan(4096);
  expect(seccompUnsupported('x64')).toBeUndefined();
  expect(seccompUnsupported('ia32')).toBe(
    "the sandbox's seccomp filter has no system call table for this architecture (ia32); it knows x64 and arm64",
  );
  expect(() => seccompFilter('riscv64')).toThrow(/no system call table for this architecture \(riscv64\)/);
});
