import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger } from '@testrun/core/logger';
import { parseTargetRules, type LookupAll, type TargetPolicyConfig } from '@testrun/core/target-policy';
import { BrowserPool } from '../../../apps/worker/src/browser/browser-pool';
import { BrowserIsolationError } from '../../../apps/worker/src/network/browser-netns';
import { startEgress, type WorkerEgress } from '../../../apps/worker/src/network/worker-egress';
import { testTargetAllow } from '../../support/processes';

/*
 * A page's ways out that do not speak HTTP through a proxy: WebRTC (STUN and TURN over UDP, TURN
 * over TCP), WebTransport (QUIC over UDP), beside WebSocket and fetch. Every listener is on
 * 127.0.0.2, outside the allowed ports of 127.0.0.1, and owned by this file, which counts what reaches
 * it. Chromium runs as the worker runs it: launched through the egress's launcher, each page in a
 * context with its run's proxy credentials.
 */

jest.setTimeout(90_000);

const FORBIDDEN_HOST = '127.0.0.2';
const POLICY: TargetPolicyConfig = {
  allow: parseTargetRules(testTargetAllow(), 'TARGET_ALLOW'),
  deny: [],
  protectedEndpoints: [],
  protectedPorts: [],
  protectedHosts: [],
  machineAddresses: [],
};
const lookup: LookupAll = (hostname) => Promise.reject(new Error(`getaddrinfo ENOTFOUND ${hostname}`));

/** A UDP listener that counts datagrams; `answer` replies to each (the STUN responder). */
interface UdpListener {
  socket: UdpSocket;
  port: number;
  datagrams: number;
}

async function udpListener(answer?: (message: Buffer, from: RemoteInfo) => Buffer | undefined): Promise<UdpListener> {
  const socket = createSocket('udp4');
  const listener: UdpListener = { socket, port: 0, datagrams: 0 };
  socket.on('message', (message, from) => {
    listener.datagrams += 1;
    const reply = answer?.(message, from);
    if (reply) socket.send(reply, from.port, from.address);
  });
  socket.bind(0, FORBIDDEN_HOST);
  await once(socket, 'listening');
  listener.port = socket.address().port;
  return listener;
}

/** RFC 5389 Binding success response with the sender's XOR-MAPPED-ADDRESS: what makes an srflx candidate. */
function stunBindingResponse(request: Buffer, from: RemoteInfo): Buffer | undefined {
  if (request.length < 20 || request.readUInt16BE(0) !== 0x0001) return undefined;
  const cookie = request.readUInt32BE(4);
  const attribute = Buffer.alloc(12);
  attribute.writeUInt16BE(0x0020, 0); // XOR-MAPPED-ADDRESS
  attribute.writeUInt16BE(8, 2);
  attribute.writeUInt16BE(0x0001, 4); // IPv4
  attribute.writeUInt16BE(from.port ^ (cookie >>> 16), 6);
  const address = from.address.split('.').reduce((sum, octet) => sum * 256 + Number(octet), 0);
  attribute.writeUInt32BE((address ^ cookie) >>> 0, 8);
  const header = Buffer.alloc(20);
  header.writeUInt16BE(0x0101, 0);
  header.writeUInt16BE(attribute.length, 2);
  request.copy(header, 4, 4, 20); // cookie and transaction id
  return Buffer.concat([header, attribute]);
}

/** A TCP listener that counts connections (TURN over TCP, and the WebSocket and fetch targets). */
async function tcpListener(): Promise<{ server: TcpServer; port: number; connections: () => number }> {
  let connections = 0;
  const server = createTcpServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  server.listen(0, FORBIDDEN_HOST);
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port, connections: () => connections };
}

/** Gathers ICE candidates against the given servers; resolves their types, once gathering completes (or 8 s). */
const GATHER = `async (iceServers) => {
  const pc = new RTCPeerConnection({ iceServers });
  pc.createDataChannel('probe');
  const candidates = [];
  pc.onicecandidate = (event) => { if (event.candidate) candidates.push(event.candidate.type); };
  await pc.setLocalDescription(await pc.createOffer());
  await new Promise((resolve) => {
    pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === 'complete') resolve(); };
    setTimeout(resolve, 8000);
  });
  pc.close();
  return candidates;
}`;

/** Opens a WebSocket, a fetch and a WebTransport session to the forbidden host; resolves what each did. */
const OTHER_WAYS = `async ({ wsUrl, fetchUrl, webTransportUrl }) => {
  const ws = await new Promise((resolve) => {
    const socket = new WebSocket(wsUrl);
    socket.onopen = () => resolve('open');
    socket.onerror = () => resolve('error');
  });
  const fetched = await fetch(fetchUrl).then((r) => 'status ' + r.status, () => 'failed');
  let webTransport = 'unsupported';
  if (typeof WebTransport === 'function') {
    try {
      const session = new WebTransport(webTransportUrl);
      webTransport = await Promise.race([session.ready.then(() => 'ready', () => 'failed'),
        new Promise((resolve) => setTimeout(() => resolve('pending'), 5000))]);
    } catch { webTransport = 'refused'; }
  }
  return { ws, fetched, webTransport };
}`;

let fixture: Server;
let fixtureOrigin: string;
let stun: UdpListener;
let turnUdp: UdpListener;
let quic: UdpListener;
let turnTcp: Awaited<ReturnType<typeof tcpListener>>;
let web: Awaited<ReturnType<typeof tcpListener>>;
let egress: WorkerEgress;
let pool: BrowserPool;

function quietLogger() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
  return { logger: createLogger({ service: 'worker', stream }), text: () => lines.join('') };
}

beforeAll(async () => {
  fixture = createServer((req, res) => {
    if (req.url === '/data') res.writeHead(200, { 'content-type': 'text/plain' }).end('allowed-data');
    else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>fixture</title><p>fixture</p>');
  });
  fixture.listen(0, '127.0.0.1');
  await once(fixture, 'listening');
  fixtureOrigin = `http://127.0.0.1:${(fixture.address() as AddressInfo).port}`;
  [stun, turnUdp, quic, turnTcp, web] = await Promise.all([
    udpListener(stunBindingResponse),
    udpListener(),
    udpListener(),
    tcpListener(),
    tcpListener(),
  ]);
  egress = await startEgress(POLICY, quietLogger().logger, lookup, 'on');
  pool = new BrowserPool({ extraArgs: egress.launchArgs, wrapExecutable: egress.wrapExecutable });
});

afterAll(async () => {
  await pool.close();
  await egress.close();
  fixture.closeAllConnections();
  fixture.close();
  for (const udp of [stun, turnUdp, quic]) udp.socket.close();
  for (const tcp of [turnTcp, web]) tcp.server.close();
});

it('lets no STUN, TURN or QUIC packet out, and no other connection past the proxy, while allowed HTTP works', async () => {
  const run = egress.proxy.openRun('run_webrtc.1');
  const context = await pool.newContext({ proxy: run.proxy });
  try {
    const page = await context.newPage();
    await page.goto(`${fixtureOrigin}/`);
    expect(await page.evaluate(() => fetch('/data').then((r) => r.text()))).toBe('allowed-data');

    const turn = { username: 'user', credential: 'secret' };
    const candidates = await page.evaluate(
      `(${GATHER})(${JSON.stringify([
        { urls: `stun:${FORBIDDEN_HOST}:${stun.port}` },
        { urls: `turn:${FORBIDDEN_HOST}:${turnUdp.port}?transport=udp`, ...turn },
        { urls: `turn:${FORBIDDEN_HOST}:${turnTcp.port}?transport=tcp`, ...turn },
      ])})`,
    );
    const others = await page.evaluate<{ ws: string; fetched: string; webTransport: string }>(
      `(${OTHER_WAYS})(${JSON.stringify({
        wsUrl: `ws://${FORBIDDEN_HOST}:${web.port}/`,
        fetchUrl: `http://${FORBIDDEN_HOST}:${web.port}/`,
        webTransportUrl: `https://${FORBIDDEN_HOST}:${quic.port}/`,
      })})`,
    );

    expect({
      stunDatagrams: stun.datagrams,
      turnUdpDatagrams: turnUdp.datagrams,
      turnTcpConnections: turnTcp.connections(),
      quicDatagrams: quic.datagrams,
      webConnections: web.connections(),
    }).toEqual({ stunDatagrams: 0, turnUdpDatagrams: 0, turnTcpConnections: 0, quicDatagrams: 0, webConnections: 0 });
    expect(candidates).not.toContain('srflx');
    expect(candidates).not.toContain('relay');
    expect(others.ws).toBe('error');
    expect(others.fetched).toBe('failed');
    expect(others.webTransport).not.toBe('ready');
    // What went to the proxy was refused there, by the policy, and named.
    expect(run.blocked.map((b) => `${b.host}:${b.port} ${b.rule}`)).toContain(`${FORBIDDEN_HOST}:${web.port} loopback`);
  } finally {
    await context.close();
    run.close();
  }
});

/** Run by the launcher in Chromium's place: what a process in the browser's namespace can see and reach. */
const INSIDE = `const net = require('node:net'), fs = require('node:fs');
const [proxyPort, fixturePort, forbiddenPort] = process.argv.slice(1).map(Number);
const dial = (port, host, send) => new Promise((resolve) => {
  const socket = net.connect(port, host, () => (send ? socket.write(send) : (socket.destroy(), resolve('connected'))));
  socket.on('data', (chunk) => { resolve(String(chunk).split('\\r\\n')[0]); socket.destroy(); });
  socket.on('error', (error) => resolve(error.code));
});
(async () => {
  const seen = {
    interfaces: fs.readFileSync('/proc/net/dev', 'utf8').split('\\n').slice(2).filter(Boolean).map((l) => l.split(':')[0].trim()),
    capabilities: /CapEff:\\s*(\\w+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1],
    fixture: await dial(fixturePort, '127.0.0.1'),
    forbidden: await dial(forbiddenPort, '127.0.0.2'),
    proxy: await dial(proxyPort, '127.0.0.1', 'GET http://127.0.0.1/ HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n'),
  };
  fs.writeSync(1, JSON.stringify(seen));
})();`;

it("gives the browser's process loopback only, no capabilities, and the relay to the proxy as the one way out", async () => {
  const proxyPort = /--proxy-server=http:\/\/127\.0\.0\.1:(\d+)/.exec(egress.launchArgs.join(' '))?.[1];
  const launcher = egress.wrapExecutable?.(process.execPath);
  expect(launcher).toBeDefined();
  const fixturePort = new URL(fixtureOrigin).port;
  // As Playwright starts Chromium: fds 3 and 4 are the DevTools pipe the launcher must pass on.
  const child = spawn(launcher as string, ['-e', INSIDE, `${proxyPort}`, fixturePort, `${web.port}`], {
    stdio: ['ignore', 'pipe', 'inherit', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const [code] = (await once(child, 'exit')) as [number | null];
  expect(code).toBe(0);
  expect(JSON.parse(out)).toEqual({
    interfaces: ['lo'],
    capabilities: '0000000000000000',
    // The host's loopback is not there: the fixture is reached through the proxy or not at all.
    fixture: 'ECONNREFUSED',
    forbidden: 'ECONNREFUSED',
    proxy: 'HTTP/1.1 407 Proxy Authentication Required',
  });
  expect(web.connections()).toBe(0);
});

describe('where no network namespace can be made', () => {
  let fakeBin: string;
  const savedPath = process.env.PATH;

  beforeAll(async () => {
    fakeBin = await mkdtemp(path.join(tmpdir(), 'testrun-fake-bwrap-'));
  });

  afterEach(() => {
    process.env.PATH = savedPath;
  });

  afterAll(async () => {
    await rm(fakeBin, { recursive: true, force: true });
  });

  it('refuses to start without bubblewrap, naming the way out', async () => {
    process.env.PATH = fakeBin;
    const start = startEgress(POLICY, quietLogger().logger, lookup, 'on');
    await expect(start).rejects.toBeInstanceOf(BrowserIsolationError);
    await expect(start).rejects.toThrow(/bwrap \(bubblewrap\) is not installed.*BROWSER_NETWORK_ISOLATION=off/);
  });

  it("refuses to start when bubblewrap may not make namespaces, with bubblewrap's reason", async () => {
    const fake = path.join(fakeBin, 'bwrap');
    await writeFile(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n');
    await chmod(fake, 0o755);
    process.env.PATH = fakeBin;
    await expect(startEgress(POLICY, quietLogger().logger, lookup, 'on')).rejects.toThrow(
      'failed to create the namespaces (bwrap: No permissions to create new namespace)',
    );
  });

  it('starts with BROWSER_NETWORK_ISOLATION=off, and says loudly what that leaves open', async () => {
    process.env.PATH = fakeBin;
    const { logger, text } = quietLogger();
    const open = await startEgress(POLICY, logger, lookup, 'off');
    await open.close();
    expect(open.wrapExecutable).toBeUndefined();
    expect(text()).toContain('BROWSER_NETWORK_ISOLATION=off');
    expect(text()).toContain('WebRTC (UDP)');
  });
});
