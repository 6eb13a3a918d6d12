import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkSandboxSupport } from '../../../apps/worker/src/sandbox';
import { countingListener, report, sandboxHarness, type Harness } from './sandbox-harness';

/*
 * What the sandboxed program can see and reach: its allowed environment and scratch directory,
 * nothing of the worker's environment, files, processes or network. The hostile programs are
 * test/fixtures/hostile/*.js; after each, a normal program still runs.
 */

jest.setTimeout(60_000);

const SECRET = `worker-secret-${process.pid}-${Date.now()}`;
let harness: Harness;

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  process.env.TESTRUN_SECRET = SECRET;
  harness = await sandboxHarness();
});

afterEach(() => harness.expectHealthy());

afterAll(async () => {
  delete process.env.TESTRUN_SECRET;
  await harness.close();
});

test('a normal program gets its allowed environment, writes its scratch directory and exits 0', async () => {
  const result = await harness.run(
    `
    const fs = require('fs');
    fs.writeFileSync('/work/out.txt', 'written inside');
    console.log(JSON.stringify({ env: process.env, cwd: process.cwd(), uid: process.getuid(), gid: process.getgid() }));
  `,
    { env: { GREETING: 'hello' } },
  );
  expect(result).toMatchObject({ exitCode: 0, limit: null, aborted: false, stderr: '' });
  const seen = report(result) as { env: Record<string, string>; cwd: string; uid: number; gid: number };
  expect(seen.env).toEqual({ PATH: '/usr/bin:/bin', GREETING: 'hello', PWD: '/work' });
  expect(seen.cwd).toBe('/work');
  expect(readFileSync(path.join(result.scratchDir, 'out.txt'), 'utf8')).toBe('written inside');
  expect(result.peakMemoryBytes).toBeGreaterThan(0);
});

test("the program's time zone is the host's, found without reading the zone database", async () => {
  const result = await harness.run(`
    const fs = require('fs');
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    // Without the link ICU (in Node and in Chromium) opens each file of /usr/share/zoneinfo to find it.
    console.log(JSON.stringify({ zone, link: fs.readlinkSync('/etc/localtime') }));
  `);
  expect(result.exitCode).toBe(0);
  const seen = report(result) as { zone: string; link: string };
  expect(seen.zone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
  expect(seen.link).toMatch(/^\/usr\/share\/zoneinfo\//);
});

test('the program is not root: a host uid of its own, which owns what it left in the scratch directory', async () => {
  const result = await harness.run(`
    const fs = require('fs');
    fs.writeFileSync('/work/mine.txt', 'x');
    const status = fs.readFileSync('/proc/self/status', 'utf8');
    const field = (name) => status.split('\\n').find((line) => line.startsWith(name + ':')).split(/\\s+/).slice(1).join(' ');
    console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), groups: process.getgroups(),
      capEff: field('CapEff'), capBnd: field('CapBnd'), noNewPrivs: field('NoNewPrivs'), uidMap: fs.readFileSync('/proc/self/uid_map', 'utf8').trim() }));
  `);
  expect(result.exitCode).toBe(0);
  const seen = report(result) as Record<string, unknown>;
  expect(result.uid).toBeGreaterThanOrEqual(1_000_000);
  expect(seen).toEqual({
    uid: result.uid,
    gid: result.uid,
    groups: [result.uid],
    capEff: '0000000000000000',
    capBnd: '0000000000000000',
    noNewPrivs: '1',
    // The host's own user namespace: the uid inside is the uid on the host, not a mapping to root.
    uidMap: expect.stringMatching(/^0\s+0\s+4294967295$/) as unknown,
  });
  expect(statSync(path.join(result.scratchDir, 'mine.txt')).uid).toBe(result.uid);
});

test("the worker's environment is not visible: process.env, /proc/self/environ, every /proc/*/environ and cmdline", async () => {
  expect(process.env.TESTRUN_SECRET).toBe(SECRET);
  const result = await harness.runHostile('read-environment');
  expect(result.exitCode).toBe(0);
  const seen = report(result) as { env: string; self: string; pids: string[]; environs: string[]; cmdlines: string[] };
  for (const text of [seen.env, seen.self, ...seen.environs, ...seen.cmdlines]) {
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('TESTRUN_SECRET');
  }
  // Its own PID namespace: bubblewrap's init (1) and the program, nothing of the host; the init is
  // not its user, so even its environment is refused.
  expect(seen.pids.map(Number).every((pid) => pid < 10)).toBe(true);
  expect(seen.pids.length).toBeLessThanOrEqual(3);
  expect(seen.environs[0]).toBe('EACCES');
});

test("files outside its binds cannot be read: the worker's secret file, the repository, /root, another scratch", async () => {
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
    const result = await harness.runHostile('read-files', [JSON.stringify(targets)]);
    expect(result.exitCode).toBe(0);
    const { seen, usrWrite, root } = report(result) as {
      seen: Record<string, string>;
      usrWrite: string;
      root: string[];
    };
    for (const target of targets) expect(seen[target]).toBe('ENOENT');
    expect(usrWrite).toBe('EROFS');
    expect(root).not.toContain('root');
    expect(root).not.toContain('home');
    expect(root).not.toContain('sys');
  } finally {
    await rm(repoSecret, { force: true });
  }
});

test("two sandboxes at once: neither can read the other's scratch files", async () => {
  const victimSecret = `victim-${SECRET}`;
  const victim = harness.runHostile('hold-secret', [victimSecret, '4000'], { scratch: 'victim' });
  const victimDir = path.join(harness.base, 'victim');
  const ready = path.join(victimDir, 'ready');
  for (let i = 0; i < 400 && !existsSync(ready); i += 1) await new Promise((r) => setTimeout(r, 25));
  expect(existsSync(ready)).toBe(true);
  // The victim's processes as the host numbers them: a /proc/<pid>/root path would lead into its files.
  const hostPids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  const targets = [
    path.join(victimDir, 'mine.txt'),
    '/work/../victim/mine.txt',
    ...hostPids.slice(-20).map((pid) => `/proc/${pid}/root/work/mine.txt`),
  ];
  const attacker = await harness.runHostile('read-files', [JSON.stringify(targets)], { scratch: 'attacker' });
  expect(attacker.exitCode).toBe(0);
  const { seen } = report(attacker) as { seen: Record<string, string> };
  for (const text of Object.values(seen)) expect(text).not.toContain(victimSecret);
  expect(seen[path.join(victimDir, 'mine.txt')]).toBe('ENOENT');
  const held = await victim;
  expect(held).toMatchObject({ exitCode: 0, limit: null });
  expect(readFileSync(path.join(victimDir, 'mine.txt'), 'utf8')).toBe(victimSecret);
});

test('no network: Postgres, Redis, a loopback listener of the test, the metadata address and the outside', async () => {
  const listener = await countingListener();
  try {
    // No route out of the sandbox: the connections off the machine fail before a packet leaves.
    const targets = [
      ['127.0.0.1', 5432],
      ['127.0.0.1', 6379],
      ['127.0.0.1', listener.port],
      ['169.254.169.254', 80],
      ['1.1.1.1', 80],
      ['10.0.0.1', 443],
    ];
    const result = await harness.runHostile('connect', [JSON.stringify(targets), JSON.stringify(['1.1.1.1', 53])]);
    expect(result.exitCode).toBe(0);
    expect(report(result)).toEqual({
      outcomes: ['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED', 'ENETUNREACH', 'ENETUNREACH', 'ENETUNREACH'],
      udp: 'ENETUNREACH',
      interfaces: ['lo'],
    });
    expect(listener.connections()).toBe(0);
  } finally {
    listener.server.close();
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
