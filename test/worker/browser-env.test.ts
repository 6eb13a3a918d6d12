import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger } from '@testrun/core/logger';
import { parseTargetRules, type LookupAll } from '@testrun/core/target-policy';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { startEgress, type WorkerEgress } from '../../apps/worker/src/network/worker-egress';
import { isVideoAvailable } from '../../apps/worker/src/run/video';
import { browserEnv } from '../../apps/worker/src/browser/browser-env';
import { BrowserPool } from '../../apps/worker/src/browser/browser-pool';
import { testTargetAllow } from '../support/processes';

/*
 * Chromium started as the worker starts it (in its network namespace, through the relay) while the
 * worker's environment holds secrets: none of them may reach any process of the browser.
 */

jest.setTimeout(60_000);

const SENTINEL = 'sentinel-7f3c9a1e';
const SECRETS = {
  TESTRUN_SECRET: `${SENTINEL}-secret`,
  DATABASE_URL: `postgresql://testrun:${SENTINEL}-password@127.0.0.1:5432/testrun`,
  S3_SECRET_ACCESS_KEY: `${SENTINEL}-s3`,
};
const lookup: LookupAll = (hostname) => Promise.reject(new Error(`getaddrinfo ENOTFOUND ${hostname}`));

let site: FixtureSite;
let egress: WorkerEgress;
let pool: BrowserPool;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  for (const [name, value] of Object.entries(SECRETS)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  site = await startFixtureSite();
  const policy = {
    allow: parseTargetRules(testTargetAllow(), 'TARGET_ALLOW'),
    deny: [],
    protectedEndpoints: [],
    protectedPorts: [],
    protectedHosts: [],
    machineAddresses: [],
  };
  egress = await startEgress(policy, createLogger({ service: 'worker', stream: new PassThrough() }), lookup, 'on');
  pool = new BrowserPool({ extraArgs: egress.launchArgs, wrapExecutable: egress.wrapExecutable });
});

afterAll(async () => {
  await pool.close();
  await egress.close();
  await site.close();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) Reflect.deleteProperty(process.env, name);
    else process.env[name] = value;
  }
});

/** Parent to children, of every process (Linux /proc). */
function processTree(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const line = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(line.slice(line.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  return children;
}

/** `root` and every process descended from it. */
function subtree(root: number, tree: Map<number, number[]>): number[] {
  const found = [root];
  for (let i = 0; i < found.length; i += 1) found.push(...(tree.get(found[i] ?? 0) ?? []));
  return found;
}

/** What a process was started as, and with: its command line and environment. */
function startedWith(pid: number): { cmdline: string; environ: string } | undefined {
  try {
    const read = (file: string) => readFileSync(`/proc/${pid}/${file}`, 'utf8').replaceAll('\0', ' ');
    return { cmdline: read('cmdline'), environ: read('environ') };
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
    // Gone, or a zombie, meanwhile.
    if (code === 'ENOENT' || code === 'ESRCH') return undefined;
    throw error;
  }
}

/** Widths of one text in two generic font families: 0, or equal, when fontconfig found no fonts. */
const TEXT_WIDTHS = `['serif', 'monospace'].map((family) => {
  const canvas = document.createElement('canvas').getContext('2d');
  canvas.font = '20px ' + family;
  return canvas.measureText('Testrun iiii WWWW').width;
})`;

it("gives no process of the browser any secret of the worker's environment, and it still renders text and records video", async () => {
  const run = egress.proxy.openRun('run_env.1');
  const videoDir = await mkdtemp(path.join(tmpdir(), 'testrun-env-video-'));
  try {
    const context = await pool.newContext({ proxy: run.proxy, recordVideo: { dir: videoDir } });
    try {
      const page = await context.newPage();
      await page.goto(`${site.url}/`);
      expect(await page.locator('h1').innerText()).toBe('Testrun Shop');
      const [serif, monospace] = await page.evaluate<number[]>(TEXT_WIDTHS);
      expect(serif).toBeGreaterThan(0);
      expect(monospace).not.toBe(serif);

      // What Playwright started (the launcher, now bwrap) and everything under it: bubblewrap's
      // namespace init, the relay, Chromium and its zygotes, renderer, GPU and utility processes.
      const tree = processTree();
      const launched = (tree.get(process.pid) ?? []).filter((pid) => startedWith(pid)?.cmdline.includes('bwrap'));
      expect(launched).toHaveLength(1);
      const processes = subtree(launched[0] ?? 0, tree).flatMap((pid) => startedWith(pid) ?? []);
      expect(processes.some((p) => p.cmdline.includes('netns-relay'))).toBe(true);
      expect(processes.some((p) => p.cmdline.includes('--type=renderer'))).toBe(true);
      expect(processes.some((p) => p.cmdline.includes('--type=zygote'))).toBe(true);
      // Neither this test's sentinels nor the real values the test run's own environment holds.
      const leaked = processes.filter(
        (p) => p.environ.includes(SENTINEL) || /(^| )(TESTRUN_SECRET|DATABASE_URL|REDIS_URL)=/.test(` ${p.environ}`),
      );
      expect(leaked.map((p) => p.cmdline.slice(0, 80))).toEqual([]);
    } finally {
      await context.close();
    }
    if (isVideoAvailable()) {
      const videos = await readdir(videoDir);
      expect(videos).toHaveLength(1);
      expect((await stat(path.join(videoDir, videos[0] ?? ''))).size).toBeGreaterThan(0);
    }
  } finally {
    run.close();
    await rm(videoDir, { recursive: true, force: true });
  }
});

it('passes only the listed variables, with home and temporary files in the given directory', () => {
  const env = browserEnv('/scratch/b', true, {
    ...SECRETS,
    PATH: '/p',
    LANG: 'de_DE.UTF-8',
    LC_TIME: 'C',
    HOME: '/root',
    DISPLAY: ':0',
  });
  expect(env).toEqual({
    PATH: '/p',
    LANG: 'de_DE.UTF-8',
    LC_TIME: 'C',
    HOME: '/scratch/b',
    XDG_CONFIG_HOME: '/scratch/b/.config',
    XDG_CACHE_HOME: '/scratch/b/.cache',
    XDG_DATA_HOME: '/scratch/b/.local/share',
    TMPDIR: '/scratch/b',
  });
  expect(browserEnv('/scratch/b', false, { DISPLAY: ':0', HOME: '/home/dev' })).toMatchObject({
    DISPLAY: ':0',
    XAUTHORITY: '/home/dev/.Xauthority',
  });
});

/** The HOME of every Chromium process under this one. */
function browserHomes(): Set<string> {
  const homes = subtree(process.pid, processTree())
    .flatMap((pid) => startedWith(pid) ?? [])
    .filter((p) => p.cmdline.includes('chrom'))
    .flatMap((p) => / HOME=(\S+)/.exec(` ${p.environ}`)?.[1] ?? []);
  return new Set(homes);
}

it("keeps the browser's home in a scratch directory of its own, removed when the pool closes", async () => {
  const others = browserHomes();
  const own = new BrowserPool();
  await (await own.newContext()).close();
  const homes = [...browserHomes()].filter((home) => !others.has(home));
  expect(homes).toHaveLength(1);
  const home = homes[0] ?? '';
  expect(path.basename(home)).toMatch(`testrun-worker-${process.pid}-`);
  expect(existsSync(home)).toBe(true);
  await own.close();
  expect(existsSync(home)).toBe(false);
});
