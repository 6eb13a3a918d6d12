import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BrowserPool } from './browser/browser-pool';
import { routeTargetHeaders } from './target-headers';
import { TARGET_HEADER_ARGS } from './worker-service';

/** Real Chromium: the target redirects to another origin, which must not get the run's headers. */
describe('routeTargetHeaders', () => {
  const seen: Array<{ origin: 'target' | 'other'; path: string; headers: IncomingHttpHeaders }> = [];
  let target: Server;
  let other: Server;
  let targetUrl: string;
  let otherUrl: string;
  const pool = new BrowserPool({ extraArgs: TARGET_HEADER_ARGS });

  const listen = (s: Server) =>
    new Promise<string>((resolve) =>
      s.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)),
    );

  beforeAll(async () => {
    other = createServer((req, res) => {
      seen.push({ origin: 'other', path: req.url ?? '', headers: req.headers });
      res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>other</h1>');
    });
    target = createServer((req, res) => {
      seen.push({ origin: 'target', path: req.url ?? '', headers: req.headers });
      if (req.url === '/away') return res.writeHead(302, { location: `${otherUrl}/landed` }).end();
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>target</h1><img src="${otherUrl}/pixel">`);
    });
    [targetUrl, otherUrl] = await Promise.all([listen(target), listen(other)]);
  });

  afterAll(async () => {
    await pool.close();
    target.closeAllConnections();
    other.closeAllConnections();
    target.close();
    other.close();
  });

  it('sends them to the target, not to a subresource host nor across a redirect', async () => {
    const context = await pool.newContext();
    try {
      await routeTargetHeaders(context, targetUrl, {
        'X-Preview-Token': 'tok-123456',
        Authorization: 'Bearer abcdefgh',
      });
      const page = await context.newPage();
      await page.goto(`${targetUrl}/`);
      await page.waitForFunction(() => (document.querySelector('img') as HTMLImageElement).complete);
      await page.goto(`${targetUrl}/away`);
      expect(page.url()).toBe(`${otherUrl}/landed`);
    } finally {
      await context.close();
    }
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
});
