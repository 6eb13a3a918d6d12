import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  resolveTarget,
  systemLookup,
  TargetUnresolvedError,
  type CheckedTarget,
  type LookupAll,
  type TargetRefusal,
} from '@testrun/core/target-policy';
import type {
  BlockedRequest,
  EgressProxyOptions,
  OpenRunOptions,
  RunEgress,
  RunEntry,
  RunListener,
} from './egress-types';
import { EgressRuns } from './egress-runs';
import {
  AUTH_REQUIRED_BODY,
  BLOCKED_BODY,
  connectChecked,
  forwardRequest,
  netErrorOf,
  rawResponse,
  spliceTunnel,
  UNREACHABLE_BODY,
  unreachable,
} from './proxy-wire';

/*
 * Why node:http and node:net rather than proxy-chain: the proxy must resolve each host itself,
 * judge every address, and connect to the address it judged (never resolving again), and it must
 * know which run a request belongs to. proxy-chain resolves and connects inside its own code, so
 * the check would race a second resolution (DNS rebinding); bending it to connect by a pinned
 * address takes as much code as the two handlers below.
 */

export type { BlockedRequest, EgressProxyOptions, OpenRunOptions, RunEgress, RunListener } from './egress-types';
export { EGRESS_ERROR_HEADER, egressProxyLaunchArgs } from './proxy-wire';

const MAX_BLOCKED_KEPT = 100;

/**
 * The worker's forward proxy: every request of every run's browser goes through it, and it lets
 * through only what the run's policy allows, judged on the addresses the host resolves to and
 * connected to by those very addresses. It listens on loopback on a port of its own choosing, and
 * on a Unix socket for a browser in a network namespace of its own ({@link listenUnix}).
 *
 * Chromium is launched with {@link egressProxyLaunchArgs} (so even loopback and the default
 * context go through it), and each run's context with its own credentials from {@link openRun}
 * (Playwright's per-context `proxy`), which is how the proxy knows whose request it sees. A
 * request without valid credentials is refused. A browser that is one run's alone (a Playwright
 * sandbox's) is given a listener of the run's own instead ({@link openRunListener}): what comes
 * through it is that run's, with no credentials.
 */
export class EgressProxy {
  private readonly server: Server;
  private readonly lookup: LookupAll;
  private readonly connectTimeoutMs: number;
  private readonly runs: EgressRuns;
  private listeningUrl: string | undefined;
  private unixServer: NetServer | undefined;

  constructor(private readonly options: EgressProxyOptions) {
    this.lookup = options.lookup ?? systemLookup;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
    this.server = createServer();
    this.runs = new EgressRuns(options.policy, (socket) => this.server.emit('connection', socket));
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
    return this.runs.open(runId, options, this.url);
  }

  /**
   * Gives a run a listener of its own, on the Unix socket at `socketPath` or else on an ephemeral
   * port of 127.0.0.1: every connection made there is the run's, with no credentials asked. For a
   * browser that is the run's alone (a Playwright sandbox's): Playwright intercepts every request of
   * a context that has proxy credentials, and turns its HTTP cache off, to answer the proxy's challenge.
   */
  openRunListener(runId: string, options: OpenRunOptions & { socketPath?: string } = {}): Promise<RunListener> {
    return this.runs.listen(runId, options);
  }

  /** Stops listening and cuts every connection. */
  async close(): Promise<void> {
    this.runs.closeAll();
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

  /** Resolves and judges the target; reports a refusal. `undefined` when the name did not resolve. */
  private async check(run: RunEntry, url: URL): Promise<CheckedTarget | TargetRefusal | undefined> {
    const askedAt = Date.now();
    try {
      const result = await resolveTarget(run.policy, url, this.lookup);
      if (!result.allowed) this.report(run, result, url, askedAt);
      return result;
    } catch (error) {
      if (error instanceof TargetUnresolvedError) return undefined;
      throw error;
    }
  }

  private report(run: RunEntry, refusal: TargetRefusal, url: URL, askedAt = Date.now()): void {
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    const blocked: BlockedRequest = {
      runId: run.runId,
      host: refusal.host === '' ? url.hostname : refusal.host,
      port,
      rule: refusal.rule,
      detail: refusal.detail,
      askedAt,
    };
    if (run.blocked.length < MAX_BLOCKED_KEPT) run.blocked.push(blocked);
    run.onBlocked?.(blocked);
    this.options.onBlocked?.(blocked);
  }

  /** A plain HTTP request in absolute form (`GET http://host/path`). */
  private async handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const run = this.runs.of(req);
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
      this.unreachable(run, res, 'ERR_NAME_NOT_RESOLVED');
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
      this.unreachable(run, res, netErrorOf(error));
      return;
    }
    this.runs.track(run, socket);
    this.runs.track(run, req.socket);
    forwardRequest(req, res, url, socket);
  }

  /**
   * A plain HTTP request whose target could not be reached, answered as the run's entry says: the
   * proxy's 502 page naming `netError`, or (a run's own listener) its connection cut with no answer,
   * which Chromium reports as a network error: a page.goto that passed on the proxy's page would be
   * a green `playwright test` never gives.
   */
  private unreachable(run: RunEntry, res: ServerResponse, netError: string): void {
    if (run.unreachable === 'reset') res.socket?.destroy();
    else unreachable(res, netError);
  }

  /** A tunnel (`CONNECT host:port`): HTTPS, and WebSockets of either scheme. */
  private async handleConnect(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const run = this.runs.of(req);
    if (!run) {
      client.end(
        rawResponse('407 Proxy Authentication Required', AUTH_REQUIRED_BODY, [
          'Proxy-Authenticate: Basic realm="testrun"',
        ]),
      );
      return;
    }
    this.runs.track(run, client);
    let url: URL;
    try {
      // Only the authority matters; the scheme just lets the URL parser canonicalise host and port.
      url = new URL(`https://${req.url ?? ''}/`);
    } catch {
      client.end(rawResponse('400 Bad Request', 'CONNECT needs host:port.\n'));
      return;
    }
    const checked = await this.check(run, url);
    if (checked && !checked.allowed) {
      client.end(rawResponse('403 Forbidden', BLOCKED_BODY));
      return;
    }
    // No name, or nothing answered: a run's own listener cuts the tunnel, so that the client fails
    // as if it had connected itself; a step test's gets the proxy's 502.
    const upstream = checked && (await connectChecked(checked, this.connectTimeoutMs).catch(() => null));
    if (!upstream) {
      if (run.unreachable === 'reset') client.destroy();
      else client.end(rawResponse('502 Bad Gateway', UNREACHABLE_BODY));
      return;
    }
    this.runs.track(run, upstream);
    if (client.destroyed) {
      upstream.destroy();
      return;
    }
    spliceTunnel(client, upstream, head);
  }
}
