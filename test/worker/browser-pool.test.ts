import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { BrowserPool, type BrowserPoolEvent } from '../../apps/worker/src/browser/browser-pool';
import { chooseExecutablePath } from '../../apps/worker/src/browser/executable';

jest.setTimeout(30_000);

let site: FixtureSite;
let pool: BrowserPool;
const events: BrowserPoolEvent[] = [];

beforeAll(async () => {
  site = await startFixtureSite();
  pool = new BrowserPool({ onEvent: (event) => events.push(event) });
});

afterAll(async () => {
  await pool.close();
  await site.close();
});

/** Chromium main processes this test process started (Linux /proc): how the tests kill one. */
function chromiumChildren(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (ppid === process.pid && /chrom/i.test(cmdline)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

async function headingOf(url: string): Promise<string> {
  const context = await pool.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url);
    return await page.locator('h1').innerText();
  } finally {
    await context.close();
  }
}

it("prefers Playwright's own Chromium and falls back to the configured path", async () => {
  const bundled = chromium.executablePath();
  const expected = existsSync(bundled) ? bundled : '/opt/some/chromium';
  expect(await chooseExecutablePath('/opt/some/chromium')).toBe(expected);
  const pool = new BrowserPool({ executablePath: '/opt/some/chromium', headlessShellPath: null });
  expect(await pool.resolveExecutablePath()).toBe(expected);
});

it('launches the headless shell for a headless browser when there is one, as Playwright does', async () => {
  const bundled = chromium.executablePath();
  const shell = '/usr/lib/chromium/chromium-headless-shell';
  // Playwright's own browser, installed, wins over both; else the shell when it exists, else the configured path.
  const own = (path: string) => (existsSync(bundled) ? bundled : path);
  expect(existsSync(shell)).toBe(true);
  expect(await chooseExecutablePath('/opt/some/chromium', shell)).toBe(own(shell));
  expect(await chooseExecutablePath('/opt/some/chromium', '/opt/no/shell')).toBe(own('/opt/some/chromium'));
  const pool = (options: ConstructorParameters<typeof BrowserPool>[0]) =>
    new BrowserPool(options).resolveExecutablePath();
  // The pool's default shell is Debian's; a headed browser, or none (CHROMIUM_HEADLESS_SHELL_PATH=off), runs the full one.
  expect(await pool({ executablePath: '/opt/x' })).toBe(own(shell));
  expect(await pool({ executablePath: '/opt/x', headless: false })).toBe(own('/opt/x'));
  expect(await pool({ executablePath: '/opt/x', headlessShellPath: null })).toBe(own('/opt/x'));
});

it('launches once for concurrent first callers and reuses the browser for every context', async () => {
  const contexts = await Promise.all([pool.newContext(), pool.newContext(), pool.newContext()]);
  expect(pool.launchCount).toBe(1);
  const browser = await pool.getBrowser();
  for (const context of contexts) expect(context.browser()).toBe(browser);
  await Promise.all(contexts.map((c) => c.close()));
  for (let i = 0; i < 3; i += 1) expect(await headingOf(`${site.url}/`)).toBe('Testrun Shop');
  expect(pool.launchCount).toBe(1);
  expect(events.filter((e) => e.type === 'launched')).toHaveLength(1);
});

it('isolates contexts: cookies of one run are not seen by the next', async () => {
  const first = await pool.newContext();
  await first.addCookies([{ name: 'session', value: 'one', url: site.url }]);
  const second = await pool.newContext();
  try {
    expect(await second.cookies(site.url)).toEqual([]);
  } finally {
    await Promise.all([first.close(), second.close()]);
  }
});

it("keeps Playwright's disabled features and opens no browser UI pages per context", async () => {
  const pids = chromiumChildren();
  expect(pids.length).toBeGreaterThan(0);
  // Chromium keeps only the last --disable-features: it must name every feature an earlier one did.
  for (const pid of pids) {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const lists = args.filter((a) => a.startsWith('--disable-features=')).map((a) => a.slice(19).split(','));
    expect(lists.length).toBeGreaterThan(0);
    const last = lists.at(-1) ?? [];
    for (const earlier of lists) expect(last).toEqual(expect.arrayContaining(earlier));
    expect(last).toEqual(expect.arrayContaining(['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup']));
  }
  const context = await pool.newContext();
  try {
    await (await context.newPage()).goto(`${site.url}/`);
    const cdp = await (await pool.getBrowser()).newBrowserCDPSession();
    const { targetInfos } = await cdp.send('Target.getTargets', { filter: [{}] });
    expect(targetInfos.filter((t) => t.type === 'browser_ui')).toEqual([]);
    expect(targetInfos.some((t) => t.type === 'page')).toBe(true);
    await cdp.detach();
  } finally {
    await context.close();
  }
});

it('counts its open contexts, and tells a hung browser from a live or relaunching one', async () => {
  const open = [await pool.newContext(), await pool.newContext()];
  expect(pool.openContexts).toBe(2);
  await open[0]?.close();
  expect(pool.openContexts).toBe(1);
  await open[1]?.close();
  expect(pool.openContexts).toBe(0);
  expect(await pool.answers(2_000)).toBe(true);
  // A stopped browser process stays connected but answers nothing: hung.
  const pids = chromiumChildren();
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  try {
    expect(await pool.answers(500)).toBe(false);
  } finally {
    for (const pid of pids) process.kill(pid, 'SIGCONT');
  }
  expect(await pool.answers(2_000)).toBe(true);
  // Gone, with the relaunch left to the next run: not a hang.
  await (await pool.getBrowser()).close();
  expect(await pool.answers(500)).toBe(true);
  await pool.getBrowser();
});

it('relaunches transparently after the browser was closed underneath it', async () => {
  const before = pool.launchCount;
  await (await pool.getBrowser()).close();
  expect(await headingOf(`${site.url}/about`)).toBe('About Testrun Shop');
  expect(pool.launchCount).toBe(before + 1);
});

it('relaunches transparently after the browser process was killed', async () => {
  const browser = await pool.getBrowser();
  const before = pool.launchCount;
  const pids = chromiumChildren();
  expect(pids.length).toBeGreaterThan(0);
  const disconnected = new Promise((resolve) => browser.once('disconnected', resolve));
  for (const pid of pids) process.kill(pid, 'SIGKILL');
  await disconnected;
  expect(events.at(-1)).toEqual({ type: 'disconnected', expected: false });
  expect(await headingOf(`${site.url}/`)).toBe('Testrun Shop');
  expect(pool.launchCount).toBe(before + 1);
});

it('refuses new contexts once closed, and close is idempotent', async () => {
  const own = new BrowserPool();
  await (await own.newContext()).close();
  await own.close();
  await own.close();
  await expect(own.newContext()).rejects.toThrow('BrowserPool is closed');
});

it('names the missing executable when there is no Chromium at all', async () => {
  const bundled = chromium.executablePath();
  if (existsSync(bundled)) return; // Playwright's browser wins over any configured path on this machine.
  const broken = new BrowserPool({ executablePath: '/nonexistent/chromium', headlessShellPath: '/nonexistent/shell' });
  await expect(broken.newContext()).rejects.toThrow(/Chromium not found at \/nonexistent\/chromium/);
  await broken.close();
});
