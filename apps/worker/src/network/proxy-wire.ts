// The egress proxy's wire-level parts: its fixed answers, the headers it passes on, and connecting
// to a target by the addresses that were checked.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { connect, type Socket } from 'node:net';
import type { CheckedTarget } from '@testrun/core/target-policy';
import { TimeoutError, withTimeout } from '@testrun/core/with-timeout';

/** The whole answer to a refused request: the same words whatever the target and whatever listens there. */
export const BLOCKED_BODY = 'This request was blocked by the target network policy.\n';
export const UNREACHABLE_BODY = 'The target could not be reached.\n';
export const AUTH_REQUIRED_BODY = 'Proxy authentication required.\n';
/** Headers that belong to one hop (the page to the proxy, or the proxy to the target) and are not passed on. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * On the proxy's own 502 to a plain HTTP request: the network error Chromium would have shown had
 * it connected itself (`ERR_CONNECTION_REFUSED`, `ERR_NAME_NOT_RESOLVED`...), so a step reports an
 * unreachable target as such rather than as an HTTP error.
 */
export const EGRESS_ERROR_HEADER = 'x-testrun-egress-error';

/** The Chromium network error that matches a failed connection. */
export function netErrorOf(error: unknown): string {
  if (error instanceof TimeoutError) return 'ERR_CONNECTION_TIMED_OUT';
  // Not `instanceof Error`: errors of node's own modules may come from another realm (a test's vm).
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  switch (code) {
    case 'ECONNREFUSED':
      return 'ERR_CONNECTION_REFUSED';
    case 'ECONNRESET':
      return 'ERR_CONNECTION_RESET';
    case 'ETIMEDOUT':
      return 'ERR_CONNECTION_TIMED_OUT';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'ERR_ADDRESS_UNREACHABLE';
    default:
      return 'ERR_CONNECTION_FAILED';
  }
}

export function unreachable(res: ServerResponse, netError: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res
    .writeHead(502, { 'content-type': 'text/plain; charset=utf-8', [EGRESS_ERROR_HEADER]: netError })
    .end(UNREACHABLE_BODY);
}

export function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export function rawResponse(status: string, body: string, extra: string[] = []): string {
  return [
    `HTTP/1.1 ${status}`,
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...extra,
    '',
    body,
  ].join('\r\n');
}

/** Raw header pairs minus hop-by-hop ones and any the `Connection` header names. */
function endToEndHeaders(raw: readonly string[]): string[] {
  const named = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === 'connection') {
      for (const token of (raw[i + 1] ?? '').split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    out.push(name, raw[i + 1] ?? '');
  }
  return out;
}

/** Opens a TCP connection to the first of the checked addresses that answers. */
export async function connectChecked(target: CheckedTarget, timeoutMs: number): Promise<Socket> {
  let lastError: unknown = new Error('no address to connect to');
  for (const { address } of target.addresses) {
    // noDelay: a request's small writes go at once, not after the target acknowledges the last one.
    const socket = connect({ host: address, port: target.port, noDelay: true });
    try {
      await withTimeout(once(socket, 'connect'), timeoutMs, `connecting to ${target.host}`);
      return socket;
    } catch (error) {
      socket.destroy();
      lastError = error;
    }
  }
  throw lastError;
}

/** Sends a plain HTTP request on to its target over `socket` (connected to a checked address) and pipes the answer back. */
export function forwardRequest(req: IncomingMessage, res: ServerResponse, url: URL, socket: Socket): void {
  const upstream = httpRequest({
    method: req.method,
    path: `${url.pathname}${url.search}`,
    headers: endToEndHeaders(req.rawHeaders),
    setHost: false,
    createConnection: () => socket,
  });
  upstream.on('response', (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEndHeaders(answer.rawHeaders));
    answer.pipe(res);
  });
  upstream.on('error', (error) => unreachable(res, netErrorOf(error)));
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
}

/** Answers a CONNECT once the target is connected, and joins the two sockets until either closes. */
export function spliceTunnel(client: Duplex, upstream: Socket, head: Buffer): void {
  upstream.on('error', () => client.destroy());
  upstream.on('close', () => client.destroy());
  client.on('close', () => upstream.destroy());
  client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  if (head.length > 0) upstream.write(head);
  client.pipe(upstream);
  upstream.pipe(client);
}

/**
 * Chromium flags that send its HTTP traffic through the egress proxy: loopback too (`<-loopback>`
 * removes Chromium's implicit bypass), and WebRTC asked to use only what can be proxied. That last
 * one is a request, not a wall: STUN and TURN over UDP went past it, which is why Chromium runs in
 * a network namespace whose only way out is the proxy (browser-netns.ts).
 */
export function egressProxyLaunchArgs(proxyUrl: string): string[] {
  return [
    `--proxy-server=${proxyUrl}`,
    '--proxy-bypass-list=<-loopback>',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  ];
}
