import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTargetPolicy, parseTargetRules } from '@testrun/core/target-policy';
import { withTimeout } from '@testrun/core/with-timeout';
import type { BrowserContext } from 'playwright';
import { BrowserPool } from '../../../apps/worker/src/browser/browser-pool';
import { EgressProxy, egressProxyLaunchArgs, type RunEgress } from '../../../apps/worker/src/network/egress-proxy';
import { routeTargetHeaders } from '../../../apps/worker/src/network/target-headers';
import { testTargetAllow } from '../../support/processes';

/**
 * Real Chromium behind the worker's egress proxy, as the worker runs it: the target redirects to
 * another origin, which must not get the run's headers; and the requests Playwright fetches itself
 * for the target (route.fetch) obey the target network policy and the unsafe-port list.
 */
describe('routeTargetHeaders', () => {
  const seen: Array<{ origin: 'target' | 'other'; path: string; headers: IncomingHttpHeaders }> = [];
  let target: Server;
  let other: Server;
  let denied: Server;
  let deniedConnections = 0;
  let targetUrl: string;
  let otherUrl: string;
  let deniedUrl: string;
  const proxy = new EgressProxy({
    policy: createTargetPolicy({ allow: parseTargetRules(testTargetAllow(), 'TARGET_ALLOW') }),
  });
  let pool: BrowserPool;
  let runs = 0;

  const listen = (s: Server, port = 0) =>
    new Promise<string>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}`));
    });

  /** A context with a run's own egress, closed (with the egress) afterwards. */
  async function asRun(
    work: (context: BrowserContext, egress: RunEgress) => Promise<void>,
    policy?: Parameters<EgressProxy['openRun']>[1],
  ) {
    runs += 1;
    const egress = proxy.openRun(`headers_${runs}`, policy);
    const context = await pool.newContext({ proxy: egress.proxy });
    try {
      await work(context, egress);
    } finally {
      await context.close();
      egress.close();
    }
  }

  beforeAll(async () => {
    other = createServer((req, res) => {
      seen.push({ origin: 'other', path: req.url ?? '', headers: req.headers });
      const back = new URL(req.url ?? '/', 'http://other').searchParams.get('to');
      if (back)
        return res.writeHead(302, { location: `${targetUrl}${back}`, 'access-control-allow-origin': '*' }).end();
      res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>other</h1>');
    });
    target = createServer((req, res) => {
      seen.push({ origin: 'target', path: req.url ?? '', headers: req.headers });
      if (req.url === '/away') return res.writeHead(302, { location: `${otherUrl}/landed` }).end();
      if (req.url === '/same') return res.writeHead(302, { location: `/home` }).end();
      if (req.url === '/round-trip') return res.writeHead(302, { location: `${otherUrl}/bounce?to=/home` }).end();
      if (req.url === '/image') return res.writeHead(200, { 'access-control-allow-origin': '*' }).end('image');
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>target</h1><img src="${otherUrl}/pixel">`);
    });
    denied = createServer((_req, res) => res.end('SECRET-INTERNAL-ANSWER'));
    denied.on('connection', () => (deniedConnections += 1));
    [targetUrl, otherUrl, deniedUrl] = await Promise.all([listen(target), listen(other), listen(denied)]);
    await proxy.start();
    pool = new BrowserPool({ extraArgs: egressProxyLaunchArgs(proxy.url) });
  });

  afterAll(async () => {
    await pool.close();
    await proxy.close();
    for (const s of [target, other, denied]) {
      s.closeAllConnections();
      s.close();
    }
  });

  it('sends them to the target, not to a subresource host nor across a redirect', async () => {
    await asRun(async (context) => {
      await routeTargetHeaders(context, targetUrl, {
        'X-Preview-Token': 'tok-123456',
        Authorization: 'Bearer abcdefgh',
      });
      const page = await context.newPage();
      await page.goto(`${targetUrl}/`);
      await page.waitForFunction(() => (document.querySelector('img') as HTMLImageElement).complete);
      await page.goto(`${targetUrl}/away`);
      expect(page.url()).toBe(`${otherUrl}/landed`);
    });
    const toTarget = seen.filter((s) => s.origin === 'target');
    expect(toTarget.map((s) => s.path)).toEqual(['/', '/away']);
    for (const s of toTarget)
      expect(s.headers).toMatchObject({ 'x-preview-token': 'tok-123456', authorization: 'Bearer abcdefgh' });
    const toOther = seen.filter((s) => s.origin === 'other');
    expect(toOther.map((s) => s.path).sort()).toEqual(['/landed', '/pixel']);
    for (const s of toOther) {
      expect(s.headers['x-preview-token']).toBeUndefined();
      expect(s.headers.authorization).toBeUndefined();
    }
  });

  it('sends them again on every redirect that leads back into the target, from any origin', async () => {
    seen.length = 0;
    await asRun(async (context) => {
      const ready = await routeTargetHeaders(context, targetUrl, { 'X-Preview-Token': 'tok-123456' });
      const page = await context.newPage();
      await ready(page);
      // target /same -> 302 target /home.
      await page.goto(`${targetUrl}/same`);
      // target /round-trip -> 302 other /bounce -> 302 target /home.
      await page.goto(`${targetUrl}/round-trip`);
      expect(page.url()).toBe(`${targetUrl}/home`);
      // A fetch to another origin that redirects to the target.
      await page.evaluate(async (url) => (await fetch(url)).text(), `${otherUrl}/bounce?to=/image`);
      // A popup, once open, on a round trip.
      const [popup] = await Promise.all([context.waitForEvent('page'), page.evaluate(() => void window.open())]);
      await ready(popup);
      await popup.goto(`${targetUrl}/round-trip`);
      expect(popup.url()).toBe(`${targetUrl}/home`);
    });
    const token = (s: (typeof seen)[number]) => [s.origin, s.path, s.headers['x-preview-token'] ?? null];
    expect(seen.filter((s) => s.path !== '/pixel').map(token)).toEqual([
      ['target', '/same', 'tok-123456'],
      ['target', '/home', 'tok-123456'],
      ['target', '/round-trip', 'tok-123456'],
      ['other', '/bounce?to=/home', null],
      ['target', '/home', 'tok-123456'],
      ['other', '/bounce?to=/image', null],
      ['target', '/image', 'tok-123456'],
      ['target', '/round-trip', 'tok-123456'],
      ['other', '/bounce?to=/home', null],
      ['target', '/home', 'tok-123456'],
    ]);
  });

  it('fetches the target through the run proxy, so a target the policy refuses is never connected', async () => {
    const port = Number(new URL(deniedUrl).port);
    const policy = createTargetPolicy({
      allow: parseTargetRules(testTargetAllow(), 'TARGET_ALLOW'),
      protectedEndpoints: [{ host: '127.0.0.1', port }],
    });
    await asRun(
      async (context, egress) => {
        await routeTargetHeaders(context, deniedUrl, { 'X-Preview-Token': 'tok-123456' });
        const page = await context.newPage();
        const answer = await page.goto(`${deniedUrl}/`).then(
          async (response) => (response ? await response.text() : ''),
          () => '',
        );
        expect(answer).not.toContain('SECRET-INTERNAL-ANSWER');
        expect(egress.blocked[0]).toMatchObject({ host: '127.0.0.1', port, rule: 'protected_endpoint' });
      },
      { policy },
    );
    expect(deniedConnections).toBe(0);
  });

  it("fetches the target through the run proxy, so Chromium's unsafe ports stay closed", async () => {
    // 6679 is on the Fetch standard's bad-port list; Chromium alone would refuse it, Node would not.
    const unsafe = createServer((_req, res) => res.end('SECRET-UNSAFE-PORT-ANSWER'));
    let connections = 0;
    unsafe.on('connection', () => (connections += 1));
    const unsafeUrl = await listen(unsafe, 6679);
    try {
      await asRun(async (context, egress) => {
        await routeTargetHeaders(context, unsafeUrl, { 'X-Preview-Token': 'tok-123456' });
        const page = await context.newPage();
        await withTimeout(
          page.goto(`${unsafeUrl}/`).catch(() => null),
          15_000,
          'opening a page on an unsafe port',
        );
        expect(egress.blocked[0]).toMatchObject({ port: 6679, rule: 'unsafe_port' });
      });
    } finally {
      unsafe.closeAllConnections();
      unsafe.close();
    }
    expect(connections).toBe(0);
  });
});
