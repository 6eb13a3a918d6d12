import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import path from 'node:path';
import type { RefusedRequest } from '../../../apps/worker/src/executors/playwright';

/*
 * What the Playwright runner's tests serve on the host's loopback: the shop's pages (the target), a
 * second origin, and an HTTP proxy on a Unix socket (the sandbox's only way out, as the worker's
 * egress proxy would be) that refuses `blocked.test` and reports each refusal.
 */

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
}

export interface Site {
  origin: string;
  seen: Seen[];
  server: Server;
}

const SHOP = '<!doctype html><title>Shop</title><h1>Shop</h1><button id="buy">Buy</button>';

function headersPage(other: string): string {
  return `<!doctype html><h1>Headers</h1><img src="${other}/pixel.png"><p id="loaded"></p>
<script>Promise.all([fetch('/echo'), fetch('${other}/echo', { mode: 'no-cors' })])
  .then(() => { document.getElementById('loaded').textContent = 'done'; });</script>`;
}

/** A site on 127.0.0.1 that records every request's headers; `redirectTo` is where /redirect-out goes. */
export async function serveSite(redirectTo?: () => string): Promise<Site> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push({ path: url.pathname, headers: req.headers });
    if (url.pathname === '/redirect-out' && redirectTo) {
      res.writeHead(302, { location: `${redirectTo()}/landing` }).end();
    } else if (url.pathname === '/headers') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(headersPage(url.searchParams.get('other') ?? ''));
    } else if (url.pathname === '/echo' || url.pathname === '/landing' || url.pathname === '/pixel.png') {
      res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('ok');
    } else {
      res.writeHead(200, { 'content-type': 'text/html' }).end(SHOP);
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, seen, server };
}

export interface Proxy {
  socketPath: string;
  /** Refusals not yet taken, all of them: the hook runPlaywrightTests' `takeBlocked` reads. */
  takeBlocked(): RefusedRequest[];
  server: Server;
}

/**
 * A plain-HTTP proxy on a Unix socket: `hosts` maps a host name to a port of the host's loopback
 * (a name the browser does not take for loopback, so it uses the proxy); any other host is refused
 * (403) and the refusal reported; a mapped port where nothing listens drops the connection.
 */
export async function serveProxy(dir: string, hosts: Record<string, number>): Promise<Proxy> {
  const refusals: RefusedRequest[] = [];
  const refuse = (host: string, port: number) =>
    refusals.push({ host, port, detail: `${host} is not allowed (rule: test_policy)` });
  const server = createServer((req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end();
      return;
    }
    const port = hosts[target.hostname];
    if (port === undefined) {
      refuse(target.hostname, Number(target.port || 80));
      res
        .writeHead(403, { 'content-type': 'text/plain' })
        .end('This request was blocked by the target network policy.');
      return;
    }
    const upstream = httpRequest(
      { host: '127.0.0.1', port, path: target.pathname + target.search, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  // CONNECT (Playwright's API requests tunnel plain HTTP too).
  server.on('connect', (req, client) => {
    const [host = '', asked = '443'] = (req.url ?? '').split(':');
    const port = hosts[host];
    if (port === undefined) {
      refuse(host, Number(asked));
      client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  const socketPath = path.join(dir, 'proxy.sock');
  server.listen(socketPath);
  await once(server, 'listening');
  return { socketPath, takeBlocked: () => refusals.splice(0), server };
}
