// Over 300 lines: the proxy's plain-HTTP and CONNECT handlers share its private run table, the
// credentials check and the connect-by-checked-address path; split, they would pass that state
// around. The address checks it can stand without already live in checked-connection.ts.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { TimeoutError, withTimeout } from '@testrun/core/with-timeout';
import {
  resolveTarget,
  systemLookup,
  TargetUnresolvedError,
  type CheckedTarget,
  type LookupAll,
  type TargetBlockRule,
  type TargetPolicy,
  type TargetRefusal,
} from '@testrun/core/target-policy';

/*
 * Why node:http and node:net rather than proxy-chain: the proxy must resolve each host itself,
 * judge every address, and connect to the address it judged (never resolving again), and it must
 * know which run a request belongs to. proxy-chain resolves and connects inside its own code, so
 * the check would race a second resolution (DNS rebinding); bending it to connect by a pinned
 * address takes as much code as the two handlers below.
 */

/** One request the policy refused, as the run learns of it. Never anything the target would have answered. */
export interface BlockedRequest {
  runId: string;
  /** Host as the page asked for it (a name, or an address). */
  host: string;
  port: number;
  rule: TargetBlockRule;
  /** A sentence naming the host and the rule, fit for the run's summary. */
  detail: string;
}

/** Options of {@link EgressProxy}. */
export interface EgressProxyOptions {
  /** The deployment's policy; a run may bring a narrower one ({@link EgressProxy.openRun}). */
  policy: TargetPolicy;
  /** Resolves host names. Default: the system resolver. Tests give a table of their own. */
  lookup?: LookupAll;
  /** Told about every refused request of every run, for the worker's log. Default: nobody. */
  onBlocked?: (blocked: BlockedRequest) => void;
  /** How long one connection to a target may take to open. Default 30000 ms. */
  connectTimeoutMs?: number;
}

/** Playwright's per-context `proxy` option for one run. */
interface RunProxySettings {
  server: string;
  username: string;
  password: string;
}

/** Options of {@link EgressProxy.openRun}. */
export interface OpenRunOptions {
  /** The run's policy (the deployment's one narrowed by its workspace). Default: the proxy's policy. */
  policy?: TargetPolicy;
  /** Told about each refused request of this run. Default: nobody (see {@link RunEgress.blocked}). */
  onBlocked?: (blocked: BlockedRequest) => void;
}

/** A run's way out: the proxy settings for its browser context, and what was refused so far. */
export interface RunEgress {
  readonly proxy: RunProxySettings;
  /** Refused requests in order (the first 100 are kept). */
  readonly blocked: readonly BlockedRequest[];
  /** Forgets the run's credentials and cuts its open connections. */
  close(): void;
}

interface RunEntry {
  runId: string;
  tokenDigest: Buffer;
  policy: TargetPolicy;
  onBlocked: ((blocked: BlockedRequest) => void) | undefined;
  blocked: BlockedRequest[];
  sockets: Set<Duplex>;
}

const MAX_BLOCKED_KEPT = 100;
/** The whole answer to a refused request: the same words whatever the target and whatever listens there. */
const BLOCKED_BODY = 'This request was blocked by the target network policy.\n';
const UNREACHABLE_BODY = 'The target could not be reached.\n';
const AUTH_REQUIRED_BODY = 'Proxy authentication required.\n';
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
function netErrorOf(error: unknown): string {
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

function unreachable(res: ServerResponse, netError: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res
    .writeHead(502, { 'content-type': 'text/plain; charset=utf-8', [EGRESS_ERROR_HEADER]: netError })
    .end(UNREACHABLE_BODY);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function rawResponse(status: string, body: string, extra: string[] = []): string {
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
async function connectChecked(target: CheckedTarget, timeoutMs: number): Promise<Socket> {
  let lastError: unknown = new Error('no address to connect to');
  for (const { address } of target.addresses) {
    const socket = connect({ host: address, port: target.port });
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

/**
 * The worker's forward proxy: every request of every run's browser goes through it, and it lets
 * through only what the run's policy allows, judged on the addresses the host resolves to and
 * connected to by those very addresses. It listens on loopback on a port of its own choosing, and
 * on a Unix socket for a browser in a network namespace of its own ({@link listenUnix}).
 *
 * Chromium is launched with {@link egressProxyLaunchArgs} (so even loopback and the default
 * context go through it), and each run's context with its own credentials from {@link openRun}
 * (Playwright's per-context `proxy`), which is how the proxy knows whose request it sees. A
 * request without valid credentials is refused.
 */
export class EgressProxy {
  private readonly server: Server;
  private readonly lookup: LookupAll;
  private readonly connectTimeoutMs: number;
  private readonly runs = new Map<string, RunEntry>();
  private listeningUrl: string | undefined;
  private unixServer: NetServer | undefined;

  constructor(private readonly options: EgressProxyOptions) {
    this.lookup = options.lookup ?? systemLookup;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
    this.server = createServer();
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.handleRequest(req, res).catch(() => res.destroy());
    });
    this.server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.handleConnect(req, socket, head).catch(() => socket.destroy());
    });
    this.server.on('clientError', (_error, socket: Duplex) => socket.destroy());
  }

  /** Starts listening on 127.0.0.1 (an ephemeral port). */
  async start(): Promise<void> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('the egress proxy has no TCP address');
    this.listeningUrl = `http://127.0.0.1:${address.port}`;
  }

  /** `http://127.0.0.1:<port>`, once started. */
  get url(): string {
    if (this.listeningUrl === undefined) throw new Error('the egress proxy is not started');
    return this.listeningUrl;
  }

  /**
   * Also takes connections on the Unix socket at `path`: the way in for a browser in a network
   * namespace of its own, where the proxy's TCP address does not exist. A relay there listens on
   * the same port number (browser-netns.ts), so {@link url} stays right from both sides.
   */
  async listenUnix(path: string): Promise<void> {
    const unix = createNetServer((socket) => this.server.emit('connection', socket));
    unix.listen(path);
    await once(unix, 'listening');
    this.unixServer = unix;
  }

  /** Gives a run credentials of its own. The run calls `close()` on the result when it ends. */
  openRun(runId: string, options: OpenRunOptions = {}): RunEgress {
    if (runId === '' || runId.includes(':'))
      throw new Error('a run id for the egress proxy must be non-empty and have no ":"');
    if (this.runs.has(runId)) throw new Error(`run ${runId} already has egress open`);
    const token = randomBytes(24).toString('base64url');
    const entry: RunEntry = {
      runId,
      tokenDigest: digest(token),
      policy: options.policy ?? this.options.policy,
      onBlocked: options.onBlocked,
      blocked: [],
      sockets: new Set(),
    };
    this.runs.set(runId, entry);
    return {
      proxy: { server: this.url, username: runId, password: token },
      blocked: entry.blocked,
      close: () => {
        if (this.runs.get(runId) !== entry) return;
        this.runs.delete(runId);
        for (const socket of entry.sockets) socket.destroy();
      },
    };
  }

  /** Stops listening and cuts every connection. */
  async close(): Promise<void> {
    for (const entry of this.runs.values()) for (const socket of entry.sockets) socket.destroy();
    this.runs.clear();
    const unix = this.unixServer;
    this.unixServer = undefined;
    const unixClosed = unix?.listening ? once(unix, 'close') : undefined;
    unix?.close();
    if (this.server.listening) {
      const closed = once(this.server, 'close');
      this.server.close();
      this.server.closeAllConnections();
      await closed;
    }
    await unixClosed;
  }

  private authenticate(header: string | undefined): RunEntry | undefined {
    const match = header === undefined ? null : /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
    if (!match) return undefined;
    const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    const entry = this.runs.get(decoded.slice(0, colon));
    if (!entry) return undefined;
    return timingSafeEqual(entry.tokenDigest, digest(decoded.slice(colon + 1))) ? entry : undefined;
  }

  /** Resolves and judges the target; reports a refusal. `undefined` when the name did not resolve. */
  private async check(run: RunEntry, url: URL): Promise<CheckedTarget | TargetRefusal | undefined> {
    try {
      const result = await resolveTarget(run.policy, url, this.lookup);
      if (!result.allowed) this.report(run, result, url);
      return result;
    } catch (error) {
      if (error instanceof TargetUnresolvedError) return undefined;
      throw error;
    }
  }

  private report(run: RunEntry, refusal: TargetRefusal, url: URL): void {
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    const blocked: BlockedRequest = {
      runId: run.runId,
      host: refusal.host === '' ? url.hostname : refusal.host,
      port,
      rule: refusal.rule,
      detail: refusal.detail,
    };
    if (run.blocked.length < MAX_BLOCKED_KEPT) run.blocked.push(blocked);
    run.onBlocked?.(blocked);
    this.options.onBlocked?.(blocked);
  }

  private track(run: RunEntry, socket: Duplex): void {
    if (run.sockets.has(socket)) return;
    run.sockets.add(socket);
    socket.once('close', () => run.sockets.delete(socket));
  }

  /** A plain HTTP request in absolute form (`GET http://host/path`). */
  private async handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const run = this.authenticate(req.headers['proxy-authorization']);
    if (!run) {
      res.writeHead(407, {
        'proxy-authenticate': 'Basic realm="testrun"',
        'content-type': 'text/plain; charset=utf-8',
      });
      res.end(AUTH_REQUIRED_BODY);
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res
        .writeHead(400, { 'content-type': 'text/plain; charset=utf-8' })
        .end('A proxy request needs an absolute URL.\n');
      return;
    }
    if (url.protocol !== 'http:') {
      // https and wss travel through CONNECT; anything else is no target.
      this.report(
        run,
        {
          allowed: false,
          rule: 'scheme',
          host: url.hostname,
          detail: `${url.protocol} URLs are not allowed as targets (rule: scheme)`,
        },
        url,
      );
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end(BLOCKED_BODY);
      return;
    }
    const checked = await this.check(run, url);
    if (!checked) {
      unreachable(res, 'ERR_NAME_NOT_RESOLVED');
      return;
    }
    if (!checked.allowed) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end(BLOCKED_BODY);
      return;
    }
    let socket: Socket;
    try {
      socket = await connectChecked(checked, this.connectTimeoutMs);
    } catch (error) {
      unreachable(res, netErrorOf(error));
      return;
    }
    this.track(run, socket);
    this.track(run, req.socket);
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

  /** A tunnel (`CONNECT host:port`): HTTPS, and WebSockets of either scheme. */
  private async handleConnect(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const run = this.authenticate(req.headers['proxy-authorization']);
    if (!run) {
      client.end(
        rawResponse('407 Proxy Authentication Required', AUTH_REQUIRED_BODY, [
          'Proxy-Authenticate: Basic realm="testrun"',
        ]),
      );
      return;
    }
    this.track(run, client);
    let url: URL;
    try {
      // Only the authority matters; the scheme just lets the URL parser canonicalise host and port.
      url = new URL(`https://${req.url ?? ''}/`);
    } catch {
      client.end(rawResponse('400 Bad Request', 'CONNECT needs host:port.\n'));
      return;
    }
    const checked = await this.check(run, url);
    if (!checked?.allowed) {
      client.end(
        checked ? rawResponse('403 Forbidden', BLOCKED_BODY) : rawResponse('502 Bad Gateway', UNREACHABLE_BODY),
      );
      return;
    }
    let upstream: Socket;
    try {
      upstream = await connectChecked(checked, this.connectTimeoutMs);
    } catch {
      client.end(rawResponse('502 Bad Gateway', UNREACHABLE_BODY));
      return;
    }
    this.track(run, upstream);
    if (client.destroyed) {
      upstream.destroy();
      return;
    }
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    client.pipe(upstream);
    upstream.pipe(client);
  }
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
