import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { createTargetPolicy, parseTargetRules } from '@testrun/core/target-policy';
import { EgressProxy } from '../../../apps/worker/src/network/egress-proxy';
import { checkSandboxSupport } from '../../../apps/worker/src/sandbox';
import { report, sandboxHarness, type Harness } from './sandbox-harness';

/*
 * A sandbox given a proxy's Unix socket: the relay on its loopback is the one way out. The proxy
 * here is the test's own (it answers every request itself and records it); the worker's egress
 * proxy, with the target policy, is what the worker will give.
 */

jest.setTimeout(60_000);

const PROXY_PORT = 3128;
let harness: Harness;

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  harness = await sandboxHarness();
});

afterEach(() => harness.expectHealthy());

afterAll(() => harness.close());

test('an HTTP request through the proxy works; Postgres, Redis and a listener of the test stay unreachable', async () => {
  const seen: string[] = [];
  const proxy = createServer((request: IncomingMessage, response) => {
    seen.push(`${request.method} ${request.url}`);
    response.end(`proxied ${request.url}`);
  });
  const socketPath = path.join(harness.base, 'egress.sock');
  proxy.listen(socketPath);
  await once(proxy, 'listening');
  let connections = 0;
  const listener = createTcpServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const { port } = listener.address() as AddressInfo;
  try {
    const result = await harness.run(
      `
      const http = require('http');
      const net = require('net');
      const viaProxy = () => new Promise((resolve) => {
        const url = new URL(process.env.HTTP_PROXY);
        http.get({ host: url.hostname, port: url.port, path: 'http://example.test/hello' }, (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => resolve(body));
        }).on('error', (e) => resolve(e.code));
      });
      const direct = (port) => new Promise((resolve) => {
        const socket = net.connect({ host: '127.0.0.1', port });
        socket.on('connect', () => { socket.destroy(); resolve('connected'); });
        socket.on('error', (e) => resolve(e.code));
      });
      Promise.all([viaProxy(), direct(5432), direct(6379), direct(${port})]).then((outcomes) => console.log(JSON.stringify(outcomes)));
    `,
      {
        network: { proxySocketPath: socketPath, port: PROXY_PORT },
        env: { HTTP_PROXY: `http://127.0.0.1:${PROXY_PORT}` },
      },
    );
    expect(result).toMatchObject({ exitCode: 0, limit: null, stderr: '' });
    expect(report(result)).toEqual([
      'proxied http://example.test/hello',
      'ECONNREFUSED',
      'ECONNREFUSED',
      'ECONNREFUSED',
    ]);
    expect(seen).toEqual(['GET http://example.test/hello']);
    expect(connections).toBe(0);
  } finally {
    proxy.close();
    listener.close();
  }
});

test("through the worker's egress proxy: the policy refuses Postgres, Redis, a listener of the test and the metadata address", async () => {
  // Only 127.0.0.2 is allowed (a site of the test there); names are never resolved, so nothing but
  // loopback is dialled, and the metadata address is refused before any connection.
  const site = createServer((_request, response) => response.end('allowed'));
  site.listen(0, '127.0.0.2');
  await once(site, 'listening');
  const sitePort = (site.address() as AddressInfo).port;
  let connections = 0;
  const listener = createTcpServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const { port } = listener.address() as AddressInfo;
  const proxy = new EgressProxy({
    policy: createTargetPolicy({ allow: parseTargetRules('127.0.0.2/32') }),
    lookup: () => Promise.reject(new Error('no names in this test')),
  });
  await proxy.start();
  const socketPath = path.join(harness.base, 'worker-egress.sock');
  await proxy.listenUnix(socketPath);
  const run = proxy.openRun('sandbox-egress-test');
  const { username, password } = run.proxy;
  try {
    const urls = [
      'http://127.0.0.1:5432/',
      'http://127.0.0.1:6379/',
      `http://127.0.0.1:${port}/`,
      'http://169.254.169.254/latest/meta-data/',
      `http://127.0.0.2:${sitePort}/`,
    ];
    const result = await harness.runHostile('proxy-requests', [JSON.stringify(urls)], {
      network: { proxySocketPath: socketPath, port: PROXY_PORT },
      env: { HTTP_PROXY: `http://${username}:${encodeURIComponent(password)}@127.0.0.1:${PROXY_PORT}` },
    });
    expect(result).toMatchObject({ exitCode: 0, limit: null, stderr: '' });
    expect(report(result)).toEqual({ forward: [403, 403, 403, 403, 200], tunnel: [403, 403, 403, 403, 200] });
    expect(run.blocked.map((blocked) => blocked.rule)).toEqual([
      'loopback',
      'loopback',
      'loopback',
      'loopback',
      'loopback',
      'loopback',
      'metadata',
      'metadata',
    ]);
    // Raw sockets from the same sandbox still find nothing but the relay.
    const raw = await harness.runHostile(
      'connect',
      [
        JSON.stringify([
          ['127.0.0.1', 5432],
          ['127.0.0.1', port],
          ['169.254.169.254', 80],
        ]),
      ],
      {
        network: { proxySocketPath: socketPath, port: PROXY_PORT },
      },
    );
    expect(report(raw)).toMatchObject({ outcomes: ['ECONNREFUSED', 'ECONNREFUSED', 'ENETUNREACH'] });
    expect(connections).toBe(0);
  } finally {
    run.close();
    await proxy.close();
    site.close();
    listener.close();
  }
});

test("a run's own listener of the egress proxy: what the sandbox sends there is that run's, with no credentials and whatever credentials it shows", async () => {
  const site = createServer((_request, response) => response.end('allowed'));
  site.listen(0, '127.0.0.2');
  await once(site, 'listening');
  const url = `http://127.0.0.2:${(site.address() as AddressInfo).port}/`;
  const proxy = new EgressProxy({
    policy: createTargetPolicy({ allow: parseTargetRules('127.0.0.2/32') }),
    lookup: () => Promise.reject(new Error('no names in this test')),
  });
  await proxy.start();
  // Another run may reach the site; the sandbox's run may not (a policy that opens nothing).
  const other = proxy.openRun('another-run');
  const socketPath = path.join(harness.base, 'own.sock');
  const own = await proxy.openRunListener('own-run', { policy: createTargetPolicy({}), socketPath });
  const open = await proxy.openRunListener('open-run', { socketPath: path.join(harness.base, 'open.sock') });
  const { username, password } = other.proxy;
  try {
    const network = { proxySocketPath: socketPath, port: PROXY_PORT };
    const plain = await harness.runHostile('proxy-requests', [JSON.stringify([url])], {
      network,
      env: { HTTP_PROXY: `http://127.0.0.1:${PROXY_PORT}` },
    });
    const borrowed = await harness.runHostile('proxy-requests', [JSON.stringify([url])], {
      network,
      env: { HTTP_PROXY: `http://${username}:${encodeURIComponent(password)}@127.0.0.1:${PROXY_PORT}` },
    });
    expect(report(plain)).toEqual({ forward: [403], tunnel: [403] });
    expect(report(borrowed)).toEqual({ forward: [403], tunnel: [403] });
    expect(own.blocked.map((blocked) => blocked.rule)).toEqual(['loopback', 'loopback', 'loopback', 'loopback']);
    expect(other.blocked).toEqual([]);
    // The same request on a listener whose run may reach the site goes through, without credentials.
    const allowed = await harness.runHostile('proxy-requests', [JSON.stringify([url])], {
      network: { proxySocketPath: path.join(harness.base, 'open.sock'), port: PROXY_PORT },
      env: { HTTP_PROXY: `http://127.0.0.1:${PROXY_PORT}` },
    });
    expect(report(allowed)).toEqual({ forward: [200], tunnel: [200] });
  } finally {
    own.close();
    open.close();
    other.close();
    await proxy.close();
    site.close();
  }
});
