/**
 * One page load as a reader's Chromium makes it, counted on the wire: every response's bytes as
 * DevTools reports them (`encodedDataLength`: headers and body as received, compressed where the
 * server compressed), by type, before scrolling and after scrolling to the end; and the page's
 * times: interactive as `pnpm bench view` defines it (navigation start until the page's script has
 * wired it, `main[data-ready]`), DOMContentLoaded and the load event.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, CDPSession, Page } from 'playwright';

/** Bytes and responses of one kind of resource. */
type Tally = { bytes: number; count: number };
const KINDS = ['document', 'css', 'js', 'image', 'other'] as const;
type Kind = (typeof KINDS)[number];
type Tallies = Record<Kind, Tally>;

export type LoadSample = {
  /** Before any scrolling, once the page is interactive and its network quiet. */
  before: Tallies;
  /** After scrolling to the end of the page, once its network is quiet again. */
  after: Tallies;
  /** The page's own `Content-Encoding`. */
  encoding: string;
  /** The images the page shows (distinct addresses of its `<img>` elements): all, in its Visual changes, in its Attachments. */
  images: { all: number; visual: number; attachments: number };
  interactiveMs: number;
  domContentLoadedMs: number;
  loadMs: number;
};

function kindOf(type: string): Kind {
  if (type === 'Document') return 'document';
  if (type === 'Stylesheet') return 'css';
  if (type === 'Script') return 'js';
  if (type === 'Image') return 'image';
  return 'other';
}

const emptyTallies = (): Tallies =>
  Object.fromEntries(KINDS.map((k) => [k, { bytes: 0, count: 0 }])) as Record<Kind, Tally>;

const copy = (t: Tallies): Tallies => Object.fromEntries(KINDS.map((k) => [k, { ...t[k] }])) as Record<Kind, Tally>;

/** Tallies every response of the page from DevTools' network events; `quiet` waits for a lull. */
async function watchNetwork(cdp: CDPSession) {
  const tallies = emptyTallies();
  const kinds = new Map<string, Kind>();
  const inflight = new Set<string>();
  let lastActivity = performance.now();
  let encoding = '';
  await cdp.send('Network.enable');
  cdp.on('Network.requestWillBeSent', (e) => {
    inflight.add(e.requestId);
    lastActivity = performance.now();
  });
  cdp.on('Network.responseReceived', (e) => {
    const kind = kindOf(e.type);
    kinds.set(e.requestId, kind);
    if (kind !== 'document') return;
    const header = Object.entries(e.response.headers).find(([name]) => name.toLowerCase() === 'content-encoding');
    encoding = header?.[1] ?? 'none';
  });
  cdp.on('Network.loadingFinished', (e) => {
    const tally = tallies[kinds.get(e.requestId) ?? 'other'];
    tally.bytes += e.encodedDataLength;
    tally.count += 1;
    inflight.delete(e.requestId);
    lastActivity = performance.now();
  });
  cdp.on('Network.loadingFailed', (e) => {
    inflight.delete(e.requestId);
    lastActivity = performance.now();
  });
  return {
    tallies,
    encoding: () => encoding,
    /** Until nothing is in flight and nothing happened for `ms` (at most 20 s). */
    async quiet(ms = 500) {
      const until = performance.now() + 20_000;
      while (performance.now() < until && (inflight.size > 0 || performance.now() - lastActivity < ms)) await sleep(50);
    },
  };
}

/** Scrolls a screen at a time to the end of the page, letting lazy images start on the way. */
async function scrollToEnd(page: Page): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    const done = await page.evaluate(() => {
      window.scrollBy(0, window.innerHeight);
      return window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1;
    });
    await sleep(60);
    if (done) return;
  }
}

/** Opens `url` once in a fresh context `width` px wide (nothing cached) and counts it. */
async function loadOnce(browser: Browser, url: string, width: number): Promise<LoadSample> {
  const context = await browser.newContext({ viewport: { width, height: width > 720 ? 900 : 844 } });
  try {
    const page = await context.newPage();
    const network = await watchNetwork(await context.newCDPSession(page));
    const res = await page.goto(url, { waitUntil: 'load' });
    if (res?.status() !== 200) throw new Error(`${url} answered ${res?.status() ?? 'nothing'}`);
    const ready = await page.locator('main[data-ready]').getAttribute('data-ready');
    const timing = await page.evaluate(() => {
      const [nav] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
      return { dcl: nav?.domContentLoadedEventEnd ?? NaN, load: nav?.loadEventEnd ?? NaN };
    });
    await network.quiet();
    const before = copy(network.tallies);
    await scrollToEnd(page);
    await network.quiet();
    return {
      before,
      after: copy(network.tallies),
      encoding: network.encoding(),
      // No named function inside: the page gets the code as written, without the compiler's helpers.
      images: await page.evaluate(() => {
        const all = [...document.images];
        return {
          all: new Set(all.map((i) => i.src)).size,
          visual: new Set(all.filter((i) => i.closest('.visual-changes')).map((i) => i.src)).size,
          attachments: new Set(all.filter((i) => i.closest('.attachments')).map((i) => i.src)).size,
        };
      }),
      interactiveMs: Number(ready),
      domContentLoadedMs: timing.dcl,
      loadMs: timing.load,
    };
  } finally {
    await context.close();
  }
}

/** `rounds` counted loads of `url` at `width` px, after one that warms the server and is not counted. */
export async function measurePage(browser: Browser, url: string, width: number, rounds: number): Promise<LoadSample[]> {
  await loadOnce(browser, url, width);
  const samples: LoadSample[] = [];
  for (let i = 0; i < rounds; i++) samples.push(await loadOnce(browser, url, width));
  return samples;
}
