import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  playwrightTestKey,
  runPlaywrightTests,
  type PlaywrightTestResult,
  type RunPlaywrightOptions,
} from '../../../apps/worker/src/executors/playwright';
import { attachmentBudget, storeAttachments } from '../../../apps/worker/src/executors/playwright/store-attachments';
import { withScratch } from '../../../apps/worker/src/executors/playwright/runner/sandbox-scratch';
import type { ArtifactWriter } from '../../../apps/worker/src/run/artifact-writer';
import { SecretMask } from '../../../apps/worker/src/run/secret-mask';
import { checkSandboxSupport, readScratchFile, type SandboxLimits } from '../../../apps/worker/src/sandbox';
import { countingListener } from '../sandbox/sandbox-harness';
import { serveProxy, serveSite, type Proxy, type Site } from './pw-harness';

/*
 * Tenant code that attacks the sandbox, as Playwright specs (test/fixtures/playwright/hostile/, which
 * run the hostile programs of test/fixtures/hostile/ or require them into the test's own process),
 * run by runPlaywrightTests as the worker's executor runs them: the real runner, the real sandbox,
 * a scratch tmpfs, a proxy on a Unix socket as the only way out. Each spec reports what it saw as an
 * annotation; this process stands in for the worker and must come out of each run unharmed.
 */

jest.setTimeout(240_000);

const MiB = 1024 * 1024;
const FIXTURE = path.join(__dirname, '../../fixtures/playwright/hostile');
const PROGRAMS = path.join(__dirname, '../../fixtures/hostile');
const RELAY_PORT = 3128;
const CANARY = `testrun-canary-${process.pid}-${Date.now()}`;
const OTHER_SECRET = `other-run-${CANARY}`;
const OTHER_FILE = 'theirs.txt';
/** Small enough to hit fast (the runner without a browser needs ~200 MB); the wall clock leaves a busy machine time to start it. */
// The wall clock is long: a loaded machine may take many seconds to start the runner, and each
// attack but the CPU spin (which the clock ends, below) reaches its own limit first.
const SMALL: SandboxLimits = { memoryBytes: 384 * MiB, pids: 64, cpuQuota: 1, wallMs: 150_000, outputBytes: MiB };

let base: string;
let bundleDir: string;
let otherScratch: string;
let canaryFile: string;
let site: Site;
let proxy: Proxy;
let api: Awaited<ReturnType<typeof countingListener>>;

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  process.env.TESTRUN_CANARY_SECRET = CANARY;
  // Readable by anyone: only the sandbox's walls keep the canary and the other run's files from it.
  base = await mkdtemp(path.join(tmpdir(), 'testrun-pw-hostile-'));
  await chmod(base, 0o755);
  bundleDir = path.join(base, 'bundle');
  await cp(FIXTURE, bundleDir, { recursive: true });
  await cp(PROGRAMS, path.join(bundleDir, 'programs'), { recursive: true });
  canaryFile = path.join(base, 'canary.txt');
  await writeFile(canaryFile, CANARY, { mode: 0o644 });
  // Another run's scratch directory, as it would be beside this one.
  otherScratch = path.join(base, 'scratch-other');
  await mkdir(path.join(otherScratch, 'bundle'), { recursive: true });
  await writeFile(path.join(otherScratch, OTHER_FILE), OTHER_SECRET, { mode: 0o644 });
  await writeFile(path.join(otherScratch, 'bundle', OTHER_FILE), OTHER_SECRET, { mode: 0o644 });
  site = await serveSite();
  proxy = await serveProxy(base, { 'shop.test': Number(new URL(site.origin).port) });
  // The API's stand-in: a listener of the host on another loopback address.
  api = await countingListener('127.0.0.2');
});

afterEach(() => {
  // The worker's place: alive, its memory bounded, no sandbox group of its own left.
  process.kill(process.pid, 0);
  expect(process.memoryUsage().rss).toBeLessThan(1024 * MiB);
  const groups = readdirSync('/sys/fs/cgroup/memory/testrun-sandbox').filter((name) =>
    name.startsWith(`sbx-${process.pid}-`),
  );
  expect(groups).toEqual([]);
  expect(api.connections()).toBe(0);
});

afterAll(async () => {
  delete process.env.TESTRUN_CANARY_SECRET;
  for (const server of [site.server, proxy.server, api.server]) server.close();
  await rm(base, { recursive: true, force: true });
});

const THROUGH_PROXY: () => Partial<RunPlaywrightOptions> = () => ({
  network: { proxySocketPath: proxy.socketPath, port: RELAY_PORT },
  proxy: { server: `http://127.0.0.1:${RELAY_PORT}` },
  baseUrl: 'http://shop.test',
  takeBlocked: () => proxy.takeBlocked(),
  env: { HOSTILE_PROXY: `http://127.0.0.1:${RELAY_PORT}` },
});

interface Run {
  /** Each title's result. */
  results: Record<string, PlaywrightTestResult | undefined>;
  /** The notes the specs left in /work, read as the worker reads the sandbox's files. */
  notes: Record<string, unknown>;
}

/** Runs `titles` of `file` in one sandbox, in a scratch tmpfs of `scratchBytes` (as the executor does). */
async function run(
  file: string,
  titles: string[],
  options: Partial<RunPlaywrightOptions> = {},
  scratchBytes = 64 * MiB,
  onResult: (result: PlaywrightTestResult, scratchDir: string) => void = () => {},
): Promise<Run> {
  const ref = (title: string) => ({ file, project: '', titlePath: [title] });
  return withScratch(
    base,
    'scratch-',
    async (scratchDir) => {
      const results = await runPlaywrightTests(
        {
          bundleDir,
          configFile: 'playwright.config.js',
          scratchDir,
          evidence: 'off',
          tests: titles.map(ref),
          ...options,
          env: {
            SHOP_USER: 'alice',
            HOSTILE_CANARY_FILE: canaryFile,
            HOSTILE_OTHER_SCRATCH: otherScratch,
            HOSTILE_OTHER_FILE: OTHER_FILE,
            HOSTILE_API: JSON.stringify(['127.0.0.2', api.port]),
            ...options.env,
          },
        },
        (result) => onResult(result, scratchDir),
      );
      const byKey = new Map(results.map((r) => [r.key, r]));
      const notes: Record<string, unknown> = {};
      for (const name of ['kill-parent.json', 'kill-all.json', 'fifo.json']) {
        const text = await readScratchFile(scratchDir, name, MiB).then(String, () => null);
        if (text !== null) notes[name] = JSON.parse(text.trim().split('\n').pop() ?? 'null');
      }
      return { results: Object.fromEntries(titles.map((t) => [t, byKey.get(playwrightTestKey(ref(t)))])), notes };
    },
    scratchBytes,
  );
}

/** What a spec reported (its annotation). */
function seen(result: PlaywrightTestResult | undefined): unknown {
  const note = result?.attempts.at(-1)?.annotations.find((a) => a.type === 'seen');
  return JSON.parse(note?.description ?? 'null');
}

interface EnvironmentSeen {
  env: string;
  self: string;
  init: string;
  canaryFile: string;
  /** read-environment.js's report. */
  program: { environs: string[] };
}

const ENVIRONMENT = 'reads the environment of the worker';
const SCRATCH = "reads another run's scratch files";
const SOCKETS = 'connects to Postgres, Redis and the API with raw sockets and fetch';
const PROXIED = 'asks the proxy, the request fixture and the page for the API';
const NORMAL = 'a normal test after them still passes';

test("the worker's environment and files, another run's files, Postgres, Redis and the API: none reachable, and a normal test passes after", async () => {
  const { results } = await run('leaks.spec.js', [ENVIRONMENT, SCRATCH, SOCKETS, PROXIED, NORMAL], THROUGH_PROXY());
  const env = seen(results[ENVIRONMENT]) as EnvironmentSeen;
  expect(results[ENVIRONMENT]?.status).toBe('passed');
  // What it could read: its own variables, here and in the environs of the runner's processes.
  expect(JSON.parse(env.env)).toMatchObject({ SHOP_USER: 'alice' });
  expect(env.self).toContain('SHOP_USER=alice');
  expect(env.program.environs.filter((text) => text.includes('SHOP_USER=alice')).length).toBeGreaterThan(1);
  expect(env.init).toBe('EACCES');
  expect(env.canaryFile).toBe('ENOENT');
  expect(JSON.stringify(env)).not.toContain(CANARY);
  expect(JSON.stringify(env)).not.toContain('TESTRUN_CANARY_SECRET');

  const scratch = seen(results[SCRATCH]) as { seen: Record<string, string>; found: Record<string, string> };
  expect(results[SCRATCH]?.status).toBe('passed');
  for (const code of Object.values(scratch.seen)) expect(code).toBe('ENOENT');
  // The scan found its own file of that name, and nothing else anywhere.
  expect(scratch.found).toEqual({ '/work/tmp/theirs.txt': 'mine' });
  expect(JSON.stringify(scratch)).not.toContain(OTHER_SECRET);

  // Its fetches went to the proxy (the policy judged all four, and refused them); its raw sockets
  // reach nothing outside.
  expect(results[SOCKETS]?.summary).toMatch(
    /^Passed; the network policy refused 4 requests while it ran \(the first: 127\.0\.0\.1:5432, /,
  );
  expect(seen(results[SOCKETS])).toEqual({
    // Postgres, Redis, the API; and a listener of the spec's own, which a raw socket reaches (the
    // control) and fetch does not: in the sandbox, loopback too means the network the policy judges.
    sockets: { outcomes: ['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED', 'connected'], udp: null, interfaces: ['lo'] },
    fetches: Array(4).fill('ERR_TESTRUN_TARGET_BLOCKED'),
  });

  // Through the relay, the request fixture and the page, the proxy refuses the API's address: the
  // test, which only reports what it saw, passed, with the refusals in its summary.
  expect(results[PROXIED]).toMatchObject({ status: 'passed', code: null });
  expect(results[PROXIED]?.summary).toContain('127.0.0.2 is not allowed');
  expect(seen(results[PROXIED])).toEqual({ proxied: { forward: [403], tunnel: [403] }, request: 403, page: 403 });

  expect(results[NORMAL]).toMatchObject({ status: 'passed', code: null });
  expect(site.seen.map((s) => s.path)).toContain('/');
});

test("with network 'none': raw sockets, fetch, the request fixture and the page reach nothing outside", async () => {
  const { results } = await run('leaks.spec.js', [SOCKETS, PROXIED]);
  expect(seen(results[SOCKETS])).toMatchObject({
    sockets: { outcomes: ['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED', 'connected'], interfaces: ['lo'] },
    fetches: ['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED', 204],
  });
  expect(results[PROXIED]?.status).toBe('passed');
  expect(seen(results[PROXIED])).toEqual({
    proxied: null,
    request: expect.stringContaining(`ECONNREFUSED 127.0.0.2:${api.port}`) as unknown,
    page: expect.stringContaining('net::ERR_CONNECTION_REFUSED') as unknown,
  });
});

let fills = 0;

/** Runs one attack of limits.spec.js alone in a sandbox of `limits` (over SMALL) and returns its result; no fill of /tmp is left. */
async function limitResult(title: string, limits: Partial<SandboxLimits>): Promise<PlaywrightTestResult | undefined> {
  fills += 1;
  const fill = `testrun-hostile-fill-${process.pid}-${fills}`;
  const { results } = await run(
    'limits.spec.js',
    [title],
    { limits: { ...SMALL, ...limits }, timeoutMs: 200_000, env: { HOSTILE_TMP_FILL: `/tmp/${fill}` } },
    32 * MiB,
  );
  expect(existsSync(path.join('/tmp', fill))).toBe(false);
  return results[title];
}

/** What the sandbox reports when `limit` ends a test: its verdict, with the title to tell the runs apart. */
const endedBy = (title: string, limit: string) => ({
  title,
  status: 'error',
  code: 'resource_limit',
  summary: `The sandbox's ${limit} was hit before the test ended`,
});
const verdict = (title: string, result: PlaywrightTestResult | undefined) => ({
  title,
  status: result?.status,
  code: result?.code,
  summary: result?.summary,
});

const LIMITS: [string, Partial<SandboxLimits>, string][] = [
  ['allocates memory without bound', {}, 'memory limit'],
  ['writes gigabytes to its working directory and /tmp', { tmpBytes: 16 * MiB }, 'disk limit (its scratch space)'],
  ['floods stdout', {}, 'output limit'],
];

test.each(LIMITS)('%s: the sandbox ends it, error resource_limit (%#)', async (title, limits, limit) => {
  expect(verdict(title, await limitResult(title, limits))).toEqual(endedBy(title, limit));
});

const FORKS = 'forks without bound';
const SPINS = 'spins the CPU forever';

test("forking and spinning without bound: the sandbox's process and wall-clock limits end them, error resource_limit; forking until the test's own timeout: the process limit names it, not the timeout", async () => {
  // Only a clock ends these three, so they wait on their clocks at once, each in its own sandbox.
  // The first two: the test's budget (timeoutMs) outlasts the sandbox's wall clock, which ends them.
  // The fork bomb's clock leaves its runner time to start on a loaded machine and the bomb time to
  // reach the process limit; the spinner's verdict is the wall clock's whenever it strikes, so its
  // clock is shorter (it burns a core until then).
  // The third: a test timeout of 10 s (as a config's would) ends the test while the sandbox's wall
  // clock still runs; Playwright reports it timed out, and the process limit its groups reached
  // while it ran is what it ends on.
  const [forks, spins, timedOut] = await Promise.all([
    limitResult(FORKS, { wallMs: 20_000 }),
    limitResult(SPINS, { wallMs: 8_000 }),
    run('limits.spec.js', [FORKS], { limits: SMALL, timeoutMs: 10_000 }, 32 * MiB).then((r) => r.results[FORKS]),
  ]);
  expect(verdict(FORKS, forks)).toEqual(endedBy(FORKS, 'process limit (processes and threads)'));
  expect(verdict(SPINS, spins)).toEqual(endedBy(SPINS, 'wall-clock limit'));
  expect(verdict(FORKS, timedOut)).toEqual(endedBy(FORKS, 'process limit (processes and threads)'));
  expect(timedOut?.attempts.at(-1)?.status).toBe('timedOut');
});

const HUGE = 'reports a result larger than the worker reads';
const AFTER_HUGE = 'passes after a result too large';

test("a result over the worker's cap: dropped unread, the test ends on the output limit, the next test's result comes", async () => {
  const { results } = await run('limits.spec.js', [HUGE, AFTER_HUGE]);
  expect(results[HUGE]).toMatchObject({
    status: 'error',
    code: 'resource_limit',
    summary:
      "The sandbox's output limit was hit: the test's result (its steps, errors, annotations and output) was over 4 MiB",
  });
  expect(results[AFTER_HUGE]).toMatchObject({ status: 'passed', code: null });
});

const AFTER_KILL = 'runs after a test that kills the runner';

test('killing its parent, then every process it can: only the sandbox dies, each run ends with an error', async () => {
  const sentinel = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    const parent = await run('kill.spec.js', ['kills its parent', AFTER_KILL]);
    expect(parent.notes['kill-parent.json']).toEqual({ ppid: expect.any(Number) as unknown });
    // The bundle loaded and the test began: its code killed the runner, and the test after it never ran.
    expect(parent.results['kills its parent']).toMatchObject({
      status: 'error',
      code: 'test_code_error',
      summary: "The test's code killed the Playwright runner: it stopped while the test ran, without its result",
    });
    expect(parent.results[AFTER_KILL]).toMatchObject({
      status: 'error',
      code: 'test_code_error',
      summary: 'Not run: the code of "kills its parent", which ran before it, killed the Playwright runner',
    });
    const all = await run('kill.spec.js', ['kills every process it can'], {
      env: { HOSTILE_HOST_PID: String(sentinel.pid) },
    });
    // The host's process is not in its PID namespace; pid 1 is not its user; its parent and the
    // runner are, and die.
    expect(all.notes['kill-all.json']).toMatchObject({
      tries: { host: 'ESRCH', parent: 'sent', init: 'EPERM', all: 'sent' },
    });
    expect(all.results['kills every process it can']).toMatchObject({ status: 'error', code: 'test_code_error' });
    expect(sentinel.exitCode).toBeNull();
    process.kill(sentinel.pid as number, 0);
  } finally {
    sentinel.kill('SIGKILL');
  }
});

test('a FIFO in place of the results file: the worker does not block on it, the run ends', async () => {
  const title = 'leaves a FIFO where the worker reads the results';
  const { results, notes } = await run('kill.spec.js', [title], { limits: { wallMs: 20_000 } });
  expect(notes['fifo.json']).toEqual({ planted: true });
  expect(results[title]?.status).toBe('error');
});

test('attachments under a folder it swaps for a symlink to the host while they are stored: only its own files are kept', async () => {
  const race = 'swaps the folder of its attachments for a symlink to the host';
  const stored: string[] = [];
  const notes: string[] = [];
  const reads: Promise<void>[] = [];
  // The worker's writer, as record-tries hands it to storeAttachments as each test ends.
  const writer = { recordRunFile: (...file: unknown[]) => stored.push(String(file[3])) } as unknown as ArtifactWriter;
  const { results } = await run(
    'reads.spec.js',
    [race, 'keeps the sandbox running while the worker reads'],
    {},
    64 * MiB,
    (result, scratchDir) => {
      if (result.attachments.length > 0)
        reads.push(
          storeAttachments(writer, result, {
            scratchDir,
            mask: new SecretMask([]),
            maxFileBytes: MiB,
            budget: attachmentBudget({ maxAttachments: 50, maxRecordingBytes: MiB }),
          }).then((n) => void notes.push(...n)),
        );
    },
  );
  await Promise.all(reads);
  expect(results[race]?.status).toBe('passed');
  expect(results[race]?.attachments).toHaveLength(300);
  // The race ran: some reads found its own file (the others were refused, or found no folder).
  expect(stored).toContain('mine');
  expect(stored.filter((text) => text !== 'mine')).toEqual([]);
  expect(JSON.stringify([stored, notes])).not.toContain(CANARY);
  for (const note of notes)
    expect(note).toMatch(/^the screenshot was not kept: its file (is a symbolic link|has a file where a folder is)$/);
});

test('after every attack, a normal test through the proxy still passes', async () => {
  const { results } = await run('leaks.spec.js', [NORMAL], THROUGH_PROXY());
  expect(results[NORMAL]).toMatchObject({ status: 'passed', code: null });
});

const KERNEL = 'makes namespaces and mounts from a test body, with a page open';
const UNSHARE_REFUSED = { code: 1, stdout: '', stderr: 'unshare: unshare failed: Operation not permitted' };

test('namespaces, mounts and the calls the seccomp filter refuses, from a test body: all refused, the page works', async () => {
  const { results } = await run('kernel.spec.js', [KERNEL], THROUGH_PROXY());
  expect(results[KERNEL]).toMatchObject({ status: 'passed', code: null });
  const kernel = seen(results[KERNEL]) as { program: { seccomp: string; calls: Record<string, unknown> } };
  expect(kernel).toMatchObject({
    seccomp: '2',
    user: UNSHARE_REFUSED,
    userNet: UNSHARE_REFUSED,
    mount: UNSHARE_REFUSED,
    program: { seccomp: '2', commands: { user: UNSHARE_REFUSED, userNet: UNSHARE_REFUSED, mount: UNSHARE_REFUSED } },
  });
  const { clone3, personality_query: query, x32_getpid: x32, bpf, ...refused } = kernel.program.calls;
  expect({ clone3, query, x32, bpf }).toEqual({
    clone3: 'ENOSYS',
    query: 'ok',
    x32: 'killed by SIGSYS',
    bpf: { prog_load: 'EPERM', invalid_command: 'EPERM' },
  });
  expect(Object.keys(refused).length).toBeGreaterThan(15);
  for (const [call, outcome] of Object.entries(refused)) expect([call, outcome]).toEqual([call, 'EPERM']);
});
