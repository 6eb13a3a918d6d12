import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A site whose pages never settle: for cancels that must land while the browser is busy. */
export interface ChurnSite {
  url: string;
  close(): Promise<void>;
}

const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/**
 * Pages that keep the browser navigating and loading:
 * - `/churn?r=N`: 40 images, each answered after 0–400 ms, and a script that sends the page on
 *   through `/hop` 150 ms after it starts (so navigations go on under the next step);
 * - `/hop?n=N`: a chain of N 302 redirects that ends on `/churn`;
 * - `/slow?ms=`: a document answered after `ms`.
 * Every answer waits on a timer that {@link ChurnSite.close} clears.
 */
export async function startChurnSite(): Promise<ChurnSite> {
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };
  const send = (res: ServerResponse, status: number, body: string | Buffer, type = 'text/html') => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://churn.invalid');
    const n = Number(url.searchParams.get('n') ?? url.searchParams.get('r') ?? 0) || 0;
    switch (url.pathname) {
      case '/churn': {
        const images = Array.from({ length: 40 }, (_, i) => `<img src="/asset?i=${i}&ms=${(i * 37 + n * 11) % 400}">`);
        const next = n < 6 ? `<script>setTimeout(() => { location.href = '/hop?n=2&r=${n + 1}'; }, 150);</script>` : '';
        return send(res, 200, `<!doctype html><title>Churn ${n}</title><h1>Churn</h1>${images.join('')}${next}`);
      }
      case '/hop':
        if (n <= 0) return later(20, () => send(res, 200, '<!doctype html><title>Hop</title><h1>Churn</h1>'));
        return later(20, () => {
          if (res.destroyed) return;
          const target = n <= 1 ? `/churn?r=${url.searchParams.get('r') ?? 0}` : `/hop?n=${n - 1}`;
          res.writeHead(302, { location: target });
          res.end();
        });
      case '/asset':
        return later(Number(url.searchParams.get('ms')) || 0, () => send(res, 200, PIXEL_GIF, 'image/gif'));
      case '/slow':
        return later(Number(url.searchParams.get('ms')) || 0, () => send(res, 200, '<!doctype html><h1>Slow</h1>'));
      default:
        return send(res, 404, 'not found', 'text/plain');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
