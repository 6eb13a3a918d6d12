import { once } from 'node:events';
import { createServer } from 'node:net';
import path from 'node:path';
import { checkSandboxSupport } from '../../../apps/worker/src/sandbox';
import { report, sandboxHarness, type Harness } from './sandbox-harness';

/*
 * The sandbox's seccomp filter (apps/worker/src/sandbox/seccomp.ts) against the kernel: the hostile
 * program test/fixtures/hostile/kernel.js makes new namespaces and mounts with util-linux's unshare,
 * and the calls of syscalls.py for real with python3, as the sandbox's user. Without the filter
 * (Seccomp: 0) every one of them worked or reached the kernel (another errno), but those refused
 * for want of a capability anyway: `unshare -n`, unshare(CLONE_NEWNET), the tmpfs mount outside a
 * user namespace, and BPF_PROG_LOAD where kernel.unprivileged_bpf_disabled is set.
 */

jest.setTimeout(60_000);

let harness: Harness;

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  harness = await sandboxHarness();
});

afterEach(() => harness.expectHealthy());

afterAll(() => harness.close());

const REFUSED = { code: 1, stdout: '', stderr: 'unshare: unshare failed: Operation not permitted' };

test('new namespaces, mounts, ptrace of another process, bpf, keyctl, perf_event_open: refused by the filter', async () => {
  const result = await harness.runHostile('kernel', [], { limits: { wallMs: 45_000 } });
  expect(result).toMatchObject({ exitCode: 0, limit: null });
  expect(report(result)).toEqual({
    seccomp: '2',
    commands: { user: REFUSED, net: REFUSED, userNet: REFUSED, mount: REFUSED },
    calls: {
      unshare_user: 'EPERM',
      unshare_user_net: 'EPERM',
      unshare_net: 'EPERM',
      clone_newuser: 'EPERM',
      // So that the C library falls back to clone, whose flags the filter reads.
      clone3: 'ENOSYS',
      setns: 'EPERM',
      mount_tmpfs: 'EPERM',
      // Refused before the kernel reads the arguments (EFAULT without the filter).
      mount_unreadable: 'EPERM',
      umount2_unreadable: 'EPERM',
      ptrace_other: 'EPERM',
      process_vm_readv_other: 'EPERM',
      bpf: { prog_load: 'EPERM', invalid_command: 'EPERM' },
      keyctl: 'EPERM',
      perf_event_open: 'EPERM',
      userfaultfd: 'EPERM',
      io_uring_setup: 'EPERM',
      personality_no_aslr: 'EPERM',
      personality_query: 'ok',
      socket_vsock: 'EPERM',
      // A call of the x32 ABI: the process is killed.
      x32_getpid: 'killed by SIGSYS',
    },
  });
});

test("the filter holds for every process of the sandbox: bubblewrap's init, the relay, the program and its children", async () => {
  // A Unix socket for the relay to carry connections to (none is made).
  const proxy = createServer((socket) => socket.destroy());
  const socketPath = path.join(harness.base, 'proxy.sock');
  proxy.listen(socketPath);
  await once(proxy, 'listening');
  const result = await harness
    .run(
      `
    const { execFileSync } = require('node:child_process');
    const mode = (text) => /^Seccomp:\\s*(\\d+)/m.exec(text)[1];
    const fs = require('node:fs');
    const own = mode(fs.readFileSync('/proc/self/status', 'utf8'));
    const child = mode(execFileSync('/bin/cat', ['/proc/self/status'], { encoding: 'utf8' }));
    // Every process of the sandbox's PID namespace.
    const all = fs.readdirSync('/proc').filter((e) => /^\\d+$/.test(e)).map((pid) => {
      try { return mode(fs.readFileSync('/proc/' + pid + '/status', 'utf8')); } catch { return 'gone'; }
    });
    console.log(JSON.stringify({ own, child, processes: all.length, modes: [...new Set(all)].filter((m) => m !== 'gone') }));
  `,
      { network: { proxySocketPath: socketPath, port: 3128 } },
    )
    .finally(() => proxy.close());
  expect(result.exitCode).toBe(0);
  // bubblewrap's init, the relay and the program (cat has ended by then).
  expect(report(result)).toEqual({ own: '2', child: '2', processes: 3, modes: ['2'] });
});
