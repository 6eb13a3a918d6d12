import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { createLogger } from '@testrun/core/logger';
import { withTimeout } from '@testrun/core/with-timeout';
import {
  createTargetPolicy,
  parseTargetRules,
  readTargetPolicyConfig,
  type LookupAll,
  type TargetPolicy,
} from '@testrun/core/target-policy';
import { EgressProxy } from '../../../apps/worker/src/network/egress-proxy';
import { startEgress } from '../../../apps/worker/src/network/worker-egress';
import { freePort, spawnService } from '../../support/processes';

/*
 * An allow rule as narrow as the target (docs/NETWORK_POLICY.md, "Allow rules as narrow as the
 * target"). Real egress proxies and real listeners, all on loopback and all owned by this file: a
 * site under test, and other services on the same addresses standing in for what a machine also
 * runs there (MariaDB on 3306, RabbitMQ on 5672, NATS on 4222...). Each request goes to the proxy as
 * a run's browser would send it: a CONNECT tunnel (HTTPS, WebSockets) or a plain forward request.
 */

jest.setTimeout(60_000);

interface Listener {
  server: Server;
  host: string;
  port: number;
  connections: number;
}

async function listenOn(host: string, port: number): Promise<Listener> {
  const server = createServer((socket) => {
    listener.connections += 1;
    // What the client sends is read and dropped: a socket whose input nobody reads never sees the
    // client's end, and stays open (holding the jest worker) long after the proxy has hung up.
    socket.on('error', () => socket.destroy());
    socket.resume();
    // Any answer at all would be a leak: a service's banner (MariaDB greets first) or an HTTP reply.
    socket.end('HTTP/1.1 200 OK\r\ncontent-length: 14\r\nconnection: close\r\n\r\nSERVICE-SECRET');
  });
  const listener: Listener = { server, host, port: 0, connections: 0 };
  server.listen(port, host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([e]) => Promise.reject(e as Error))]);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the listener has no TCP address');
  listener.port = address.port;
  return listener;
}

/**
 * A service on 127.0.0.1 on a port outside the kernel's ephemeral range (where the test set-up's
 * own fixture servers are): a database's or a broker's well-known port when it is free here.
 */
async function serviceStandIn(): Promise<Listener> {
  for (const port of [3306, 5672, 4222, 1883, 4369, 15_672, 11_211]) {
    try {
      return await listenOn('127.0.0.1', port);
    } catch {
      // Taken on this machine: the next one.
    }
  }
  for (let port = 20_000; port < 20_100; port++) {
    try {
      return await listenOn('127.0.0.1', port);
    } catch {
      // Taken: the next one.
    }
  }
  throw new Error('no free port below the ephemeral range on 127.0.0.1');
}

const noNames: LookupAll = (hostname) => Promise.reject(new Error(`getaddrinfo ENOTFOUND ${hostname}`));

let site: Listener;
let neighbour: Listener;
let standIn: Listener;
let siteV6: Listener;
let neighbourV6: Listener;
const started: EgressProxy[] = [];

beforeAll(async () => {
  site = await listenOn('127.0.0.1', 0);
  neighbour = await listenOn('127.0.0.1', 0);
  standIn = await serviceStandIn();
  siteV6 = await listenOn('::1', 0);
  neighbourV6 = await listenOn('::1', 0);
});

/**
 * Closes `listener` and resolves once its last connection is gone: once every proxy has closed, and
 * with it every connection it made, nothing may be left on the listeners' side either.
 */
async function closeListener(listener: Listener): Promise<void> {
  const closed = once(listener.server, 'close');
  listener.server.close();
  await withTimeout(
    closed,
    5_000,
    `closing the listener on ${listener.host}:${listener.port} (a connection still open)`,
  );
}

afterAll(async () => {
  await Promise.all(started.map((proxy) => proxy.close()));
  await Promise.all([site, neighbour, standIn, siteV6, neighbourV6].map(closeListener));
});

async function proxyWith(policy: TargetPolicy): Promise<{ auth: string; proxy: EgressProxy }> {
  const proxy = new EgressProxy({ policy, lookup: noNames });
  await proxy.start();
  started.push(proxy);
  const egress = proxy.openRun(`run_narrow_${started.length}`);
  return { proxy, auth: `${egress.proxy.username}:${egress.proxy.password}` };
}

function allowing(rules: string, protectedPorts: number[] = []): TargetPolicy {
  return createTargetPolicy({ allow: parseTargetRules(rules, 'TARGET_ALLOW'), protectedPorts });
}

/** The proxy's status for a CONNECT to `target`, or for a plain GET of `http://<target>/` (`forward`). */
async function through(
  via: { auth: string; proxy: EgressProxy },
  target: string,
  method: 'CONNECT' | 'forward',
): Promise<number> {
  const url = new URL(via.proxy.url);
  const req = httpRequest({
    host: url.hostname,
    port: url.port,
    method: method === 'CONNECT' ? 'CONNECT' : 'GET',
    path: method === 'CONNECT' ? target : `http://${target}/`,
    headers: { 'proxy-authorization': `Basic ${Buffer.from(via.auth).toString('base64')}` },
    agent: false,
  });
  const status = new Promise<number>((resolve, reject) => {
    req.on('connect', (res: IncomingMessage, socket: Socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res: IncomingMessage) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
  });
  req.end();
  return status;
}

/** The proxy answers 403 to a CONNECT and to a forward request, and never connects to the listener. */
async function expectRefused(via: { auth: string; proxy: EgressProxy }, target: Listener): Promise<void> {
  const spelled = target.host.includes(':') ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
  const before = target.connections;
  expect(await through(via, spelled, 'CONNECT')).toBe(403);
  expect(await through(via, spelled, 'forward')).toBe(403);
  expect(target.connections).toBe(before);
}

async function expectReached(via: { auth: string; proxy: EgressProxy }, target: Listener): Promise<void> {
  const spelled = target.host.includes(':') ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
  expect(await through(via, spelled, 'CONNECT')).toBe(200);
  expect(await through(via, spelled, 'forward')).toBe(200);
}

describe("the test set-up's own TARGET_ALLOW", () => {
  it('opens the ports its fixture servers listen on, not another service of 127.0.0.1', async () => {
    const via = await proxyWith(allowing(process.env.TARGET_ALLOW ?? ''));
    await expectReached(via, site);
    await expectRefused(via, standIn);
  });
});

describe('a rule for one port', () => {
  it('127.0.0.1:<port> reaches the site and no other listener of 127.0.0.1', async () => {
    const via = await proxyWith(allowing(`127.0.0.1:${site.port}`));
    await expectReached(via, site);
    await expectRefused(via, neighbour);
    await expectRefused(via, standIn);
  });

  it('[::1]:<port> reaches the site on IPv6 loopback and no other listener of ::1', async () => {
    const via = await proxyWith(allowing(`[::1]:${siteV6.port}`));
    await expectReached(via, siteV6);
    await expectRefused(via, neighbourV6);
  });
});

describe('a port range', () => {
  /** A range holding the site's port and not the neighbour's. */
  const around = () =>
    neighbour.port > site.port ? `${site.port}-${neighbour.port - 1}` : `${neighbour.port + 1}-${site.port}`;

  it.each([
    ['an address', () => `127.0.0.1:${around()}`],
    ['a CIDR range', () => `127.0.0.0/8:${around()}`],
  ])('on %s opens the ports inside it and no port outside', async (_kind, rule) => {
    const via = await proxyWith(allowing(rule()));
    await expectReached(via, site);
    await expectRefused(via, neighbour);
    await expectRefused(via, standIn);
  });

  it("never opens the deployment's own ports inside it", async () => {
    const via = await proxyWith(allowing('127.0.0.1:1-65535', [standIn.port]));
    await expectReached(via, site);
    await expectRefused(via, standIn);
  });
});

describe('a rule that opens every service of an inside address is named at start', () => {
  const OWN = {
    databaseUrl: 'postgresql://postgres@127.0.0.1:5432/testrun',
    redisUrl: 'redis://127.0.0.1:6379',
    publicBaseUrl: 'http://localhost:3000',
  };

  async function workerStartLog(allow: string): Promise<string> {
    let text = '';
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const logger = createLogger({ service: 'worker', level: 'warn', stream });
    const egress = await startEgress(readTargetPolicyConfig({ TARGET_ALLOW: allow }, OWN), logger, noNames, 'off');
    await egress.close();
    return text;
  }

  it('by the worker, for 127.0.0.1/32, saying what to write instead', async () => {
    const log = await workerStartLog('127.0.0.1/32');
    expect(log).toContain('TARGET_ALLOW: \\"127.0.0.1/32\\" opens every port of a loopback address');
    expect(log).toContain("allow only the site's port instead: 127.0.0.1:<port>");
  });

  it('not for 127.0.0.1:8080', async () => {
    const log = await workerStartLog('127.0.0.1:8080, [::1]:8080, 127.0.0.1:3000-3999');
    expect(log).not.toContain('TARGET_ALLOW');
  });

  it('by the API, as production starts it', async () => {
    const port = await freePort();
    const api = spawnService('api', {
      PORT: String(port),
      LOG_LEVEL: 'info',
      TARGET_ALLOW: `127.0.0.1:${site.port}, 10.0.0.0/8`,
    });
    try {
      for (let i = 0; i < 600 && !api.output().includes('"message":"listening"'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(api.output()).toContain('"message":"listening"');
      expect(api.output()).toContain('TARGET_ALLOW: \\"10.0.0.0/8\\" opens every port of a private network address');
      expect(api.output()).not.toContain(`\\"127.0.0.1:${site.port}\\" opens`);
    } finally {
      api.child.kill('SIGTERM');
      await api.exited;
    }
  });
});
