import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { checkSandboxSupport } from '../../../apps/worker/src/sandbox';
import { report, sandboxHarness, type Harness } from './sandbox-harness';

/*
 * What the sandboxed program can see and reach: its allowed environment and scratch directory,
 * nothing of the worker's environment, files or network.
 */

jest.setTimeout(60_000);

const SECRET = `worker-secret-${process.pid}-${Date.now()}`;
let harness: Harness;

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  process.env.TESTRUN_SECRET = SECRET;
  harness = await sandboxHarness();
});

afterAll(async () => {
  delete process.env.TESTRUN_SECRET;
  await harness.close();
});

test('a normal program gets its allowed environment, writes its scratch directory and exits 0', async () => {
  const result = await harness.run(
    `
    const fs = require('fs');
    fs.writeFileSync('/work/out.txt', 'written inside');
    console.log(JSON.stringify({ env: process.env, cwd: process.cwd(), uptime: process.uptime() > 0 }));
  `,
    { env: { GREETING: 'hello' } },
  );
  expect(result).toMatchObject({ exitCode: 0, limit: null, aborted: false, stderr: '' });
  const seen = report(result) as { env: Record<string, string>; cwd: string };
  expect(seen.env).toEqual({ PATH: '/usr/bin:/bin', GREETING: 'hello', PWD: '/work' });
  expect(seen.cwd).toBe('/work');
  expect(readFileSync(path.join(result.scratchDir, 'out.txt'), 'utf8')).toBe('written inside');
  expect(result.peakMemoryBytes).toBeGreaterThan(0);
});

test("the worker's environment is not visible: process.env, /proc/self/environ, every /proc/*/environ", async () => {
  expect(process.env.TESTRUN_SECRET).toBe(SECRET);
  const result = await harness.run(`
    const fs = require('fs');
    const pids = fs.readdirSync('/proc').filter((entry) => /^\\d+$/.test(entry));
    const environs = pids.map((pid) => { try { return fs.readFileSync('/proc/' + pid + '/environ', 'latin1'); } catch (e) { return e.code; } });
    console.log(JSON.stringify({
      env: JSON.stringify(process.env),
      self: fs.readFileSync('/proc/self/environ', 'latin1'),
      pids,
      environs,
    }));
  `);
  expect(result.exitCode).toBe(0);
  const seen = report(result) as { env: string; self: string; pids: string[]; environs: string[] };
  for (const text of [seen.env, seen.self, ...seen.environs]) {
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('TESTRUN_SECRET');
  }
  // Its own PID namespace: bubblewrap's init (1) and the program, nothing of the host.
  expect(seen.pids.map(Number).every((pid) => pid < 10)).toBe(true);
  expect(seen.pids.length).toBeLessThanOrEqual(3);
});

test('files outside its binds cannot be read: the host /tmp, the repository, /root, another sandbox', async () => {
  const hostSecret = path.join(harness.base, 'host-secret.txt');
  const repoSecret = path.join(__dirname, `.secret-${process.pid}.txt`);
  await writeFile(hostSecret, SECRET);
  await writeFile(repoSecret, SECRET);
  await mkdir(path.join(harness.base, 'other-scratch'));
  const otherFile = path.join(harness.base, 'other-scratch', 'theirs.txt');
  await writeFile(otherFile, SECRET);
  try {
    const targets = [
      hostSecret,
      repoSecret,
      otherFile,
      '/root',
      '/home',
      '/etc/passwd',
      '/etc/shadow',
      '/sys/fs/cgroup',
    ];
    const result = await harness.run(`
      const fs = require('fs');
      const targets = ${JSON.stringify(targets)};
      const seen = {};
      for (const target of targets) {
        try { seen[target] = String(fs.statSync(target).isDirectory() ? fs.readdirSync(target) : fs.readFileSync(target, 'utf8')); }
        catch (e) { seen[target] = e.code; }
      }
      let writable;
      try { fs.writeFileSync('/usr/evil', 'x'); writable = 'written'; } catch (e) { writable = e.code; }
      console.log(JSON.stringify({ seen, writable, root: fs.readdirSync('/').sort() }));
    `);
    expect(result.exitCode).toBe(0);
    const { seen, writable, root } = report(result) as {
      seen: Record<string, string>;
      writable: string;
      root: string[];
    };
    for (const target of targets) expect(seen[target]).toBe('ENOENT');
    expect(writable).toBe('EROFS');
    expect(root).not.toContain('root');
    expect(root).not.toContain('home');
    expect(root).not.toContain('sys');
  } finally {
    await rm(repoSecret, { force: true });
  }
});

test('no network: Postgres, Redis, a loopback listener of the test and the outside are all unreachable', async () => {
  let connections = 0;
  const listener = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const { port } = listener.address() as AddressInfo;
  try {
    const result = await harness.run(`
      const net = require('net');
      const dgram = require('dgram');
      const targets = [['127.0.0.1', 5432], ['127.0.0.1', 6379], ['127.0.0.1', ${port}], ['1.1.1.1', 80], ['10.0.0.1', 443]];
      const attempt = ([host, port]) => new Promise((resolve) => {
        const socket = net.connect({ host, port, timeout: 2000 });
        socket.on('connect', () => { socket.destroy(); resolve('connected'); });
        socket.on('timeout', () => { socket.destroy(); resolve('timeout'); });
        socket.on('error', (e) => resolve(e.code));
      });
      const udp = () => new Promise((resolve) => {
        const socket = dgram.createSocket('udp4');
        socket.send('x', 53, '1.1.1.1', (e) => { socket.close(); resolve(e ? e.code : 'sent'); });
      });
      Promise.all([...targets.map(attempt), udp()]).then((outcomes) => {
        console.log(JSON.stringify({ outcomes, interfaces: Object.keys(require('os').networkInterfaces()) }));
      });
    `);
    expect(result.exitCode).toBe(0);
    const { outcomes, interfaces } = report(result) as { outcomes: string[]; interfaces: string[] };
    expect(outcomes).toEqual([
      'ECONNREFUSED',
      'ECONNREFUSED',
      'ECONNREFUSED',
      'ENETUNREACH',
      'ENETUNREACH',
      'ENETUNREACH',
    ]);
    expect(interfaces).toEqual(['lo']);
    expect(connections).toBe(0);
  } finally {
    listener.close();
  }
});

test("the program's variables reach it on a descriptor, never on a command line the host can read", async () => {
  const value = `login-password-${process.pid}-${Date.now()}`;
  const running = harness.run(
    `
    const fs = require('fs');
    fs.writeFileSync('/work/ready', '1');
    setTimeout(() => console.log(JSON.stringify({ same: process.env.LOGIN_PASSWORD === ${JSON.stringify(value)} })), 1500);
  `,
    { env: { LOGIN_PASSWORD: value }, scratch: 'env-args' },
  );
  const ready = path.join(harness.base, 'env-args', 'ready');
  for (let i = 0; i < 200 && !existsSync(ready); i += 1) await new Promise((r) => setTimeout(r, 25));
  expect(existsSync(ready)).toBe(true);
  // While it runs: no process of the host (the shell, bwrap, the relay, the program) shows the value.
  const shown = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(value);
      } catch {
        return false;
      }
    });
  expect(shown).toEqual([]);
  const result = await running;
  expect(result).toMatchObject({ exitCode: 0, limit: null });
  expect(report(result)).toEqual({ same: true });
});
