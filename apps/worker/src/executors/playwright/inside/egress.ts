/*
 * Loaded INSIDE the sandbox before anything else (NODE_OPTIONS=--require, so in the Playwright
 * runner and in every Playwright worker it forks) when the sandbox has a way out: the team's own
 * Node code (helpers, fixtures, hooks, globalSetup) reaches the network the way its browser does,
 * through the run's egress proxy and under the same policy (docs/NETWORK_POLICY.md, "What test code
 * can reach").
 *
 * Every connection of Node's `fetch` (the global dispatcher) and of `http`/`https` agents (and so
 * axios, got, node-fetch, superagent and the `ws` clients given an agent) is a tunnel: `CONNECT
 * host:port` to the proxy's listener on the sandbox's loopback (TESTRUN_EGRESS_PROXY), then the
 * request as usual, TLS included. A connection the policy refuses fails with an error that says so
 * and names the target; one the proxy cannot make (nothing listens, no such name) fails as Node
 * fails without a proxy (`connect ECONNREFUSED host:port`). Sockets the code opens itself
 * (`net.connect`: a database driver) have no way out of the sandbox.
 *
 * It imports nothing but Node: the worker's modules are not in the sandbox.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';

/** The code of the error a refused connection fails with (its message names the target and the policy). */
export const BLOCKED_CODE = 'ERR_TESTRUN_TARGET_BLOCKED';

/** A proxy's answer longer than four times this is given up as broken. */
const MAX_HEAD = 16 * 1024;

type Done = (error: Error | null, socket?: net.Socket) => void;

/** `host:port` as a CONNECT authority (an IPv6 address in brackets). */
function authorityOf(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return `${net.isIPv6(bare) ? `[${bare}]` : bare}:${port}`;
}

/** The error Node gives a connection nothing answered: what the code would see without a proxy. */
function refusedError(host: string, port: number): Error {
  return Object.assign(new Error(`connect ECONNREFUSED ${host}:${port}`), {
    code: 'ECONNREFUSED',
    errno: -111,
    syscall: 'connect',
    address: host,
    port,
  });
}

function blockedError(authority: string, body: string): Error {
  const reason = body.trim();
  return Object.assign(
    new Error(
      `the network policy refused a connection to ${authority}${reason ? ` (${reason})` : ''}; the test's targets are its run's allowed hosts`,
    ),
    { code: BLOCKED_CODE },
  );
}

/** The proxy's answer to a CONNECT: the tunnel, or the error the code sees. */
function answered(head: string, authority: string, host: string, port: number): Error | null {
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
  if (status === '200') return null;
  const body = head.slice(head.indexOf('\r\n\r\n') + 4);
  if (status === '403') return blockedError(authority, body);
  if (status === '502') return refusedError(host, port);
  return new Error(`the egress proxy answered CONNECT ${authority} with HTTP ${status ?? '(no status)'}`);
}

/**
 * A tunnel to `host:port` through the proxy at `proxy` (`127.0.0.1:port`): `done` gets the socket
 * once the proxy has connected the target, or the error the code sees.
 */
export function tunnel(proxy: { host: string; port: number }, host: string, port: number, done: Done): void {
  const authority = authorityOf(host, port);
  const socket = net.connect(proxy.port, proxy.host);
  let head = Buffer.alloc(0);
  /** The answer's head, once the proxy has sent it whole. */
  let answer: string | null = null;
  let settled = false;
  const settle = (error: Error | null) => {
    if (settled) return;
    settled = true;
    socket.removeListener('readable', onReadable);
    if (error) {
      socket.destroy();
      done(error);
    } else done(null, socket);
  };
  // Read in paused mode, so that nothing of the target's is read past the answer before the client
  // takes the socket (it starts reading once it listens).
  const onReadable = () => {
    for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) {
      head = Buffer.concat([head, chunk]);
      if (head.length > 4 * MAX_HEAD)
        return settle(new Error(`the egress proxy's answer to CONNECT ${authority} is too long`));
      if (answer !== null) continue;
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) continue;
      answer = head.toString('latin1', 0, end);
      // Anything but the tunnel: its body (a refusal's reason) follows, read to the end of the connection.
      if (!/^HTTP\/1\.[01] 200/.test(answer)) continue;
      const rest = head.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      return settle(null);
    }
  };
  // Cut with no answer: the proxy could not reach the target, which the code sees as a refusal.
  const ended = () =>
    settle(answer === null ? refusedError(host, port) : answered(head.toString('utf8'), authority, host, port));
  socket.on('readable', onReadable);
  socket.once('error', ended);
  socket.once('end', ended);
  socket.once('close', ended);
  socket.once('connect', () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
}

/** The proxy's listener, from `127.0.0.1:port`. */
export function proxyOf(value: string | undefined): { host: string; port: number } | null {
  const match = /^(.+):(\d+)$/.exec(value ?? '');
  if (!match) return null;
  return { host: match[1] as string, port: Number(match[2]) };
}

interface ConnectOptions extends Omit<tls.ConnectionOptions, 'port'> {
  host?: string;
  hostname?: string;
  port?: number | string;
  protocol?: string;
  servername?: string;
  socketPath?: string;
}

/** The options of a TLS connection over the tunnel: the target's name for SNI and its certificate. */
function tlsOver(socket: net.Socket, options: ConnectOptions, host: string): tls.TLSSocket {
  const { socketPath: _path, port: _port, ...rest } = options;
  const servername = options.servername ?? (net.isIP(host) ? undefined : host);
  return tls.connect({ ...rest, host, socket, ...(servername ? { servername } : {}) });
}

/** A connection of `kind` to the target `options` names, through the tunnel, given to `done`. */
function connectThrough(
  proxy: { host: string; port: number },
  kind: 'tcp' | 'tls',
  options: ConnectOptions,
  done: Done,
): void {
  const host = options.hostname ?? options.host ?? 'localhost';
  const port = Number(options.port) || (kind === 'tls' ? 443 : 80);
  tunnel(proxy, host, port, (error, socket) => {
    if (error || !socket) return done(error ?? new Error('no tunnel'));
    if (kind === 'tcp') return done(null, socket);
    const secure = tlsOver(socket, options, host);
    const failed = (e: Error) => done(e);
    secure.once('error', failed);
    secure.once('secureConnect', () => {
      secure.removeListener('error', failed);
      done(null, secure);
    });
  });
}

type CreateConnection = (options: ConnectOptions, callback: Done) => net.Socket | undefined;

/** `http.Agent`s and `https.Agent`s connect through the tunnel (a Unix socket path stays local). */
function patchAgents(proxy: { host: string; port: number }): void {
  const agents: [{ prototype: unknown }, 'tcp' | 'tls'][] = [
    [http.Agent, 'tcp'],
    [https.Agent, 'tls'],
  ];
  for (const [Agent, kind] of agents) {
    const prototype = Agent.prototype as { createConnection: CreateConnection };
    const original = prototype.createConnection;
    prototype.createConnection = function (this: unknown, options: ConnectOptions, callback: Done) {
      if (options.socketPath !== undefined) return original.call(this, options, callback);
      connectThrough(proxy, kind, options, callback);
      return undefined;
    };
  }
}

/** The dispatcher Node's `fetch` uses: an agent of its own undici whose connections go through the tunnel. */
function patchFetch(proxy: { host: string; port: number }): void {
  const key = Symbol.for('undici.globalDispatcher.1');
  const global = globalThis as unknown as Record<symbol, unknown>;
  // Reading a lazily loaded global loads Node's undici, which sets its default dispatcher.
  if ((globalThis as { Headers?: unknown }).Headers === undefined) return;
  const current = global[key] as { constructor: new (options: unknown) => unknown } | undefined;
  if (!current) return;
  const Agent = current.constructor;
  global[key] = new Agent({
    connect: (options: ConnectOptions, callback: Done) =>
      connectThrough(proxy, options.protocol === 'https:' ? 'tls' : 'tcp', options, callback),
  });
  // `fetch failed` alone says nothing: a refusal of the policy is named in the message, as the
  // error's cause is in Playwright's report.
  const fetch = globalThis.fetch;
  globalThis.fetch = async function (...args: Parameters<typeof fetch>) {
    try {
      return await fetch(...args);
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      if (error instanceof Error && cause?.code === BLOCKED_CODE) error.message = `fetch failed: ${cause.message}`;
      throw error;
    }
  };
}

const proxy = proxyOf(process.env.TESTRUN_EGRESS_PROXY);
if (proxy) {
  patchAgents(proxy);
  patchFetch(proxy);
}
