import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  createServer,
  get as httpGet,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import type { BrowserContext, Page } from 'playwright';
import { withTimeout } from '@testrun/core/with-timeout';
import {
  createTargetPolicy,
  parseTargetRules,
  TargetUnresolvedError,
  type LookupAll,
  type ResolvedAddress,
} from '@testrun/core/target-policy';
import { BrowserPool } from '../../../apps/worker/src/browser/browser-pool';
import {
  EgressProxy,
  egressProxyLaunchArgs,
  type BlockedRequest,
  type RunEgress,
} from '../../../apps/worker/src/network/egress-proxy';
import { pinnedLookup, resolveAndCheck } from '../../../apps/worker/src/network/checked-connection';

// Real Chromium, real loopback listeners. Only 127.0.0.1 and 127.0.0.2 are ever dialled: the
// "forbidden" listener on 127.0.0.2 stands for every internal address, and the proxy's resolver is
// a table that knows loopback names only, so nothing can leave the machine.

jest.setTimeout(60_000);

interface CountingServer {
  server: Server;
  port: number;
  connections: number;
  requests: { path: string; host: string | undefined }[];
}

async function listen(host: string, handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handler);
  const counting: CountingServer = { server, port: 0, connections: 0, requests: [] };
  server.on('connection', () => (counting.connections += 1));
  server.on('request', (req: IncomingMessage) =>
    counting.requests.push({ path: req.url ?? '', host: req.headers.host }),
  );
  server.listen(0, host);
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the listener has no TCP address');
  counting.port = address.port;
  return counting;
}

function html(body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body>${body}</body></html>`;
}

const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** Answers a WebSocket handshake (RFC 6455) and says hello: enough to prove an allowed socket opens. */
function acceptWebSocket(req: IncomingMessage, socket: Socket): void {
  const key = req.headers['sec-websocket-key'] ?? '';
  const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
  );
  socket.write(Buffer.concat([Buffer.from([0x81, 5]), Buffer.from('hello')]));
  // An upgraded socket is the server's no more: what the browser sends (its close frame) is read
  // and dropped, and once the proxy hangs up it hangs up too (it allows half-open connections).
  // Unread, it never sees the end, and stays open, holding the jest worker, after the test.
  socket.on('error', () => socket.destroy());
  socket.on('end', () => socket.end());
  socket.resume();
}

let forbidden: CountingServer;
let guarded: CountingServer;
let fixture: CountingServer;
let proxy: EgressProxy;
let pool: BrowserPool;
let forbiddenOrigin: string;
let fixtureOrigin: string;
const everyBlock: BlockedRequest[] = [];

const table: Record<string, string[]> = { 'fixture.test': ['127.0.0.1'], 'internal.test': ['127.0.0.2'] };
const askedNames: string[] = [];
const testLookup: LookupAll = (hostname) => {
  askedNames.push(hostname);
  const answers = table[hostname];
  if (!answers) return Promise.reject(new Error(`getaddrinfo ENOTFOUND ${hostname}`));
  return Promise.resolve(answers.map((address): ResolvedAddress => ({ address, family: 4 })));
};

function pageFor(path: string): string {
  const away = `${forbiddenOrigin}/secret`;
  switch (path) {
    case '/ok':
      return html(
        `<h1>allowed</h1><img id="px" src="/pixel.gif"><script>fetch('/data').then((r) => r.text()).then((t) => { document.body.dataset.loaded = t; });</script>`,
      );
    case '/meta':
      return `<!doctype html><html><head><meta http-equiv="refresh" content="0;url=${away}"></head><body>meta</body></html>`;
    case '/js':
      return html(`<script>location = ${JSON.stringify(away)};</script>`);
    case '/img':
      return html(`<img src="${forbiddenOrigin}/pixel.gif">`);
    case '/link':
      return html(`<a id="away" href="//127.0.0.2:${forbidden.port}/linked">away</a>`);
    case '/sw-page':
      return html(`<script>navigator.serviceWorker.register('/sw.js');</script>`);
    default:
      return html('<h1>fixture</h1>');
  }
}

beforeAll(async () => {
  forbidden = await listen('127.0.0.2', (_req, res) => res.end('SECRET-INTERNAL-ANSWER'));
  guarded = await listen('127.0.0.1', (_req, res) => res.end('SECRET-DATABASE-ANSWER'));
  forbiddenOrigin = `http://127.0.0.2:${forbidden.port}`;
  fixture = await listen('127.0.0.1', (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/redirect302' || path === '/redirect307') {
      res.writeHead(path === '/redirect302' ? 302 : 307, { location: `${forbiddenOrigin}/secret` }).end();
    } else if (path === '/pixel.gif') {
      res.writeHead(200, { 'content-type': 'image/gif' }).end(PIXEL_GIF);
    } else if (path === '/data') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('fixture-data');
    } else if (path === '/sw.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(
        `self.addEventListener('install', () => self.skipWaiting());
         self.addEventListener('activate', (event) => {
           event.waitUntil(fetch(${JSON.stringify(`${forbiddenOrigin}/from-service-worker`)}).catch(() => undefined));
         });`,
      );
    } else {
      res.writeHead(200, { 'content-type': 'text/html' }).end(pageFor(path));
    }
  });
  fixture.server.on('upgrade', (req: IncomingMessage, socket: Socket) => acceptWebSocket(req, socket));
  fixtureOrigin = `http://127.0.0.1:${fixture.port}`;

  proxy = new EgressProxy({
    policy: createTargetPolicy({
      // The fixture's port only: every other service of 127.0.0.1 stays closed.
      allow: parseTargetRules(`127.0.0.1:${fixture.port}`, 'TARGET_ALLOW'),
      protectedEndpoints: [{ host: '127.0.0.1', port: guarded.port }],
    }),
    lookup: testLookup,
    onBlocked: (blocked) => everyBlock.push(blocked),
  });
  await proxy.start();
  pool = new BrowserPool({ extraArgs: egressProxyLaunchArgs(proxy.url) });
});

afterEach(() => {
  // The one assertion every scenario shares: nothing ever reached the internal listeners.
  expect(forbidden.connections).toBe(0);
  expect(guarded.connections).toBe(0);
});

afterAll(async () => {
  await pool.close();
  await proxy.close();
  // Every connection ends with the proxy's: the listeners close with nothing left open.
  await Promise.all(
    [forbidden, guarded, fixture].map((s) => {
      const closed = once(s.server, 'close');
      s.server.closeAllConnections();
      s.server.close();
      return withTimeout(closed, 5_000, `closing the listener on port ${s.port} (a connection still open)`);
    }),
  );
});

let runCounter = 0;

/** A run: its own credentials and its own context, closed afterwards whatever happens. */
async function asRun(work: (page: Page, egress: RunEgress, context: BrowserContext) => Promise<void>): Promise<void> {
  runCounter += 1;
  const egress = proxy.openRun(`run_${runCounter}`);
  const context = await pool.newContext({ proxy: egress.proxy });
  try {
    await work(await context.newPage(), egress, context);
  } finally {
    await context.close();
    egress.close();
  }
}

/** Waits (bounded) until the run has reported a refusal of `host`, and returns it. */
async function blockedOf(egress: RunEgress, host = '127.0.0.2'): Promise<BlockedRequest> {
  let stop = false;
  const found = new Promise<BlockedRequest>((resolve) => {
    const look = () => {
      const hit = egress.blocked.find((b) => b.host === host);
      if (hit) resolve(hit);
      else if (!stop) setTimeout(look, 25);
    };
    look();
  });
  try {
    return await withTimeout(found, 15_000, `a blocked request to ${host}`);
  } finally {
    stop = true;
  }
}

function expectLoopbackRefusal(blocked: BlockedRequest, runId: string): void {
  expect(blocked).toEqual({
    runId,
    host: '127.0.0.2',
    port: forbidden.port,
    rule: 'loopback',
    detail: `127.0.0.2 is a loopback address (rule: loopback); to allow it, set TARGET_ALLOW=127.0.0.2:${forbidden.port} in the environment of the API and of every worker (docs/NETWORK_POLICY.md)`,
    askedAt: expect.any(Number) as unknown,
  });
  // Stamped as the request reached the proxy, before the refusal was reported.
  expect(blocked.askedAt).toBeLessThanOrEqual(Date.now());
}

describe('the allowed fixture', () => {
  it('loads with its subresources and fetches, through the proxy', async () => {
    await asRun(async (page, egress) => {
      await page.goto(`${fixtureOrigin}/ok`);
      await page.waitForFunction(() => document.body.dataset.loaded === 'fixture-data');
      const width = await page.locator('#px').evaluate((img: HTMLImageElement) => img.naturalWidth);
      expect(width).toBe(1);
      expect(await page.locator('h1').innerText()).toBe('allowed');
      expect(egress.blocked).toEqual([]);
    });
  });

  it('loads by a name the proxy resolves itself, connecting to the checked address', async () => {
    await asRun(async (page) => {
      const before = fixture.requests.length;
      await page.goto(`http://fixture.test:${fixture.port}/ok`);
      expect(await page.locator('h1').innerText()).toBe('allowed');
      expect(fixture.requests.slice(before)[0]).toEqual({ path: '/ok', host: `fixture.test:${fixture.port}` });
      expect(askedNames).toContain('fixture.test');
    });
  });

  it('opens a WebSocket to the allowed host', async () => {
    await asRun(async (page) => {
      await page.goto(`${fixtureOrigin}/`);
      const message = await page.evaluate(
        (url) =>
          new Promise<string>((resolve, reject) => {
            const socket = new WebSocket(url);
            socket.onmessage = (event) => resolve(String(event.data));
            socket.onerror = () => reject(new Error('websocket failed'));
          }),
        `ws://127.0.0.1:${fixture.port}/socket`,
      );
      expect(message).toBe('hello');
    });
  });
});

describe('every way a page reaches the forbidden host is blocked', () => {
  it.each(['/redirect302', '/redirect307'])('a %s redirect', async (path) => {
    await asRun(async (page, egress) => {
      const response = await page.goto(`${fixtureOrigin}${path}`);
      expect(response?.status()).toBe(403);
      expect(await page.content()).not.toContain('SECRET');
      expectLoopbackRefusal(await blockedOf(egress), egress.proxy.username);
    });
  });

  it.each([
    ['a meta refresh', '/meta'],
    ['a JavaScript location change', '/js'],
    ['an <img> subresource', '/img'],
  ])('%s', async (_what, pagePath) => {
    await asRun(async (page, egress) => {
      // A page that navigates away while it loads may reject goto; the refusal is what counts.
      await page.goto(`${fixtureOrigin}${pagePath}`).catch(() => undefined);
      expectLoopbackRefusal(await blockedOf(egress), egress.proxy.username);
    });
  });

  it('fetch() and XMLHttpRequest', async () => {
    await asRun(async (page, egress) => {
      await page.goto(`${fixtureOrigin}/`);
      const outcomes = await page.evaluate(async (url) => {
        const viaFetch = await fetch(url, { mode: 'no-cors' }).then(
          () => 'answered',
          () => 'failed',
        );
        const viaXhr = await new Promise<string>((resolve) => {
          const xhr = new XMLHttpRequest();
          xhr.open('GET', url);
          xhr.onload = () => resolve(xhr.responseText);
          xhr.onerror = () => resolve('failed');
          xhr.send();
        });
        return [viaFetch, viaXhr];
      }, `${forbiddenOrigin}/secret`);
      expect(outcomes.join(' ')).not.toContain('SECRET');
      await blockedOf(egress);
      expect(egress.blocked.filter((b) => b.host === '127.0.0.2').length).toBeGreaterThanOrEqual(2);
    });
  });

  it('a WebSocket', async () => {
    await asRun(async (page, egress) => {
      await page.goto(`${fixtureOrigin}/`);
      const outcome = await page.evaluate(
        (url) =>
          new Promise<string>((resolve) => {
            const socket = new WebSocket(url);
            socket.onopen = () => resolve('opened');
            socket.onerror = () => resolve('failed');
          }),
        `ws://127.0.0.2:${forbidden.port}/socket`,
      );
      expect(outcome).toBe('failed');
      expectLoopbackRefusal(await blockedOf(egress), egress.proxy.username);
    });
  });

  it('a window.open popup', async () => {
    await asRun(async (page, egress, context) => {
      await page.goto(`${fixtureOrigin}/`);
      const popup = context.waitForEvent('page');
      await page.evaluate((url) => void window.open(url), `${forbiddenOrigin}/popup`);
      const opened = await popup;
      expectLoopbackRefusal(await blockedOf(egress), egress.proxy.username);
      expect(await opened.content()).not.toContain('SECRET');
    });
  });

  it('a scheme-relative //host link', async () => {
    await asRun(async (page, egress) => {
      await page.goto(`${fixtureOrigin}/link`);
      await page.click('#away');
      expectLoopbackRefusal(await blockedOf(egress), egress.proxy.username);
      expect(await page.content()).not.toContain('SECRET');
    });
  });

  it("a service worker's fetch", async () => {
    await asRun(async (page, egress) => {
      await page.goto(`${fixtureOrigin}/sw-page`);
      await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
      expectLoopbackRefusal(await blockedOf(egress), egress.proxy.username);
    });
  });

  it('a public-looking name that resolves to the forbidden address', async () => {
    await asRun(async (page, egress) => {
      const response = await page.goto(`http://internal.test:${forbidden.port}/secret`);
      expect(response?.status()).toBe(403);
      expect(await blockedOf(egress, 'internal.test')).toEqual({
        runId: egress.proxy.username,
        host: 'internal.test',
        port: forbidden.port,
        rule: 'loopback',
        detail: `internal.test resolves to a loopback address (rule: loopback); to allow it, set TARGET_ALLOW=internal.test:${forbidden.port} in the environment of the API and of every worker (docs/NETWORK_POLICY.md)`,
        askedAt: expect.any(Number) as unknown,
      });
    });
  });

  it("the deployment's own endpoint, though its range is allowed", async () => {
    await asRun(async (page, egress) => {
      await page.goto(`${fixtureOrigin}/`);
      await page.evaluate(
        (url) => fetch(url, { mode: 'no-cors' }).catch(() => undefined),
        `http://127.0.0.1:${guarded.port}/`,
      );
      const blocked = await blockedOf(egress, '127.0.0.1');
      expect(blocked.rule).toBe('protected_endpoint');
    });
  });

  it('reports each refusal to the proxy-wide callback too', () => {
    expect(everyBlock.length).toBeGreaterThanOrEqual(10);
    expect(new Set(everyBlock.map((b) => b.rule))).toEqual(new Set(['loopback', 'protected_endpoint']));
  });
});

/** One request straight to the proxy, as a client other than the run's browser would send it. */
function viaProxy(options: {
  method?: string;
  path: string;
  auth?: string;
  /** Another of the proxy's listeners (a run's own). Default: the proxy's. */
  proxyUrl?: string;
}): Promise<{ status: number; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const url = new URL(options.proxyUrl ?? proxy.url);
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      method: options.method ?? 'GET',
      path: options.path,
      headers: options.auth ? { 'proxy-authorization': `Basic ${Buffer.from(options.auth).toString('base64')}` } : {},
      agent: false,
    });
    req.on('connect', (res: IncomingMessage, socket: Socket) => resolve({ status: res.statusCode ?? 0, socket }));
    req.on('response', (res: IncomingMessage) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, socket: res.socket });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('credentials', () => {
  it('a request without them, or with unknown or stale ones, is refused before anything is resolved', async () => {
    const egress = proxy.openRun('run_credentials');
    const { username, password } = egress.proxy;
    const seen = fixture.requests.length;
    const asked = askedNames.length;
    expect((await viaProxy({ path: `${fixtureOrigin}/data` })).status).toBe(407);
    expect((await viaProxy({ path: `${fixtureOrigin}/data`, auth: `${username}:wrong` })).status).toBe(407);
    expect((await viaProxy({ path: `${fixtureOrigin}/data`, auth: `nobody:${password}` })).status).toBe(407);
    expect((await viaProxy({ method: 'CONNECT', path: `127.0.0.1:${fixture.port}`, auth: 'nobody:x' })).status).toBe(
      407,
    );
    expect((await viaProxy({ path: `${fixtureOrigin}/data`, auth: `${username}:${password}` })).status).toBe(200);
    egress.close();
    expect((await viaProxy({ path: `${fixtureOrigin}/data`, auth: `${username}:${password}` })).status).toBe(407);
    expect(fixture.requests.length).toBe(seen + 1);
    expect(askedNames.length).toBe(asked);
  });

  it('a CONNECT tunnel opens to an allowed host and is refused to a forbidden one', async () => {
    const egress = proxy.openRun('run_tunnel');
    const auth = `${egress.proxy.username}:${egress.proxy.password}`;
    try {
      const refused = await viaProxy({ method: 'CONNECT', path: `127.0.0.2:${forbidden.port}`, auth });
      expect(refused.status).toBe(403);
      refused.socket.destroy();
      expect(egress.blocked.map((b) => b.rule)).toEqual(['loopback']);
      const refusedPort = await viaProxy({ method: 'CONNECT', path: '127.0.0.1:25', auth });
      expect(refusedPort.status).toBe(403);
      refusedPort.socket.destroy();
      expect(egress.blocked.map((b) => b.rule)).toEqual(['loopback', 'unsafe_port']);

      const tunnel = await viaProxy({ method: 'CONNECT', path: `127.0.0.1:${fixture.port}`, auth });
      expect(tunnel.status).toBe(200);
      tunnel.socket.write(`GET /data HTTP/1.1\r\nHost: 127.0.0.1:${fixture.port}\r\nConnection: close\r\n\r\n`);
      const chunks: Buffer[] = [];
      tunnel.socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      await once(tunnel.socket, 'end');
      expect(Buffer.concat(chunks).toString()).toMatch(/^HTTP\/1\.1 200[\s\S]*\r\nfixture-data\r\n/);
    } finally {
      egress.close();
    }
  });
});

describe("a run's own listener", () => {
  it("takes requests without credentials as the run's, keeps to its policy whatever credentials they show, and closes", async () => {
    const other = proxy.openRun('run_other');
    const own = await proxy.openRunListener('run_own', { policy: createTargetPolicy({}) });
    const open = await proxy.openRunListener('run_open');
    const proxyUrl = own.url ?? '';
    const borrowed = `${other.proxy.username}:${other.proxy.password}`;
    try {
      expect(own.socketPath).toBeUndefined();
      // The run's policy opens nothing: the allowed fixture is loopback, refused for it, even with another run's credentials.
      expect((await viaProxy({ path: `${fixtureOrigin}/data`, proxyUrl })).status).toBe(403);
      expect((await viaProxy({ path: `${fixtureOrigin}/data`, proxyUrl, auth: borrowed })).status).toBe(403);
      const tunnel = await viaProxy({ method: 'CONNECT', path: `127.0.0.1:${fixture.port}`, proxyUrl, auth: borrowed });
      expect(tunnel.status).toBe(403);
      tunnel.socket.destroy();
      expect(own.blocked.map((b) => b.rule)).toEqual(['loopback', 'loopback', 'loopback']);
      expect(other.blocked).toEqual([]);
      // A listener whose run has the proxy's policy reaches it, with no credentials at all.
      const seen = fixture.requests.length;
      expect((await viaProxy({ path: `${fixtureOrigin}/data`, proxyUrl: open.url })).status).toBe(200);
      expect(fixture.requests.length).toBe(seen + 1);
      open.close();
      await expect(viaProxy({ path: `${fixtureOrigin}/data`, proxyUrl: open.url })).rejects.toMatchObject({
        code: 'ECONNREFUSED',
      });
    } finally {
      other.close();
      own.close();
      open.close();
    }
  });
});

describe('resolveAndCheck, for requests the worker fetches itself', () => {
  const policy = createTargetPolicy({ allow: parseTargetRules('127.0.0.1/32') });

  it('refuses internal names, unsafe ports and schemes', async () => {
    expect(await resolveAndCheck(policy, `http://internal.test:${forbidden.port}/`, testLookup)).toMatchObject({
      allowed: false,
      rule: 'loopback',
      host: 'internal.test',
    });
    expect(await resolveAndCheck(policy, 'http://fixture.test:25/', testLookup)).toMatchObject({ rule: 'unsafe_port' });
    expect(await resolveAndCheck(policy, 'http://127.0.0.1:6667/', testLookup)).toMatchObject({ rule: 'unsafe_port' });
    expect(await resolveAndCheck(policy, 'file:///etc/passwd', testLookup)).toMatchObject({ rule: 'scheme' });
    await expect(resolveAndCheck(policy, 'http://unknown.test/', testLookup)).rejects.toBeInstanceOf(
      TargetUnresolvedError,
    );
  });

  it('returns the checked address, and pinnedLookup connects there by name', async () => {
    const checked = await resolveAndCheck(policy, `http://fixture.test:${fixture.port}/data`, testLookup);
    if (!checked.allowed) throw new Error(`expected fixture.test to be allowed: ${checked.detail}`);
    expect(checked).toMatchObject({ address: '127.0.0.1', family: 4, port: fixture.port, host: 'fixture.test' });
    const before = fixture.requests.length;
    const body = await new Promise<string>((resolve, reject) => {
      httpGet(`http://fixture.test:${fixture.port}/data`, { lookup: pinnedLookup(checked), agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(text));
      }).on('error', reject);
    });
    expect(body).toBe('fixture-data');
    expect(fixture.requests.slice(before)).toEqual([{ path: '/data', host: `fixture.test:${fixture.port}` }]);
  });
});
