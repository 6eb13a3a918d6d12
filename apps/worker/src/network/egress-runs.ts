// The egress proxy's open runs: who a request is of, by the credentials it carries or by the run's
// own listener it came through, and each run's open connections (egress-proxy.ts).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { createServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TargetPolicy } from '@testrun/core/target-policy';
import type { OpenRunOptions, RunEgress, RunEntry, RunListener } from './egress-types';
import { digest } from './proxy-wire';

export class EgressRuns {
  private readonly runs = new Map<string, RunEntry>();
  /** The connections that came through a run's own listener, and whose they are. */
  private readonly pinned = new WeakMap<Duplex, RunEntry>();

  /** `accept` hands a connection of a run's own listener to the proxy's HTTP server. */
  constructor(
    private readonly policy: TargetPolicy,
    private readonly accept: (socket: Socket) => void,
  ) {}

  /** A run known by credentials of its own, for `server` (the proxy's URL). */
  open(runId: string, options: OpenRunOptions, server: string): RunEgress {
    const token = randomBytes(24).toString('base64url');
    const entry = this.add(runId, options, digest(token));
    return {
      proxy: { server, username: runId, password: token },
      blocked: entry.blocked,
      close: () => this.close(entry),
    };
  }

  /** A run known by the listener it is given (a Unix socket at `socketPath`, or else a port of loopback). */
  async listen(runId: string, options: OpenRunOptions & { socketPath?: string }): Promise<RunListener> {
    // No credentials: its token is one nobody holds.
    const entry = this.add(runId, options, digest(randomBytes(24).toString('base64url')), 'reset');
    const listener = createServer((socket) => {
      if (this.runs.get(runId) !== entry) {
        socket.destroy();
        return;
      }
      this.pinned.set(socket, entry);
      this.track(entry, socket);
      this.accept(socket);
    });
    try {
      listener.listen(options.socketPath ?? { host: '127.0.0.1', port: 0 });
      await once(listener, 'listening');
    } catch (error) {
      this.close(entry);
      throw error;
    }
    const address = listener.address();
    return {
      url: typeof address === 'object' && address !== null ? `http://127.0.0.1:${address.port}` : undefined,
      socketPath: options.socketPath,
      blocked: entry.blocked,
      close: () => {
        this.close(entry);
        listener.close();
      },
    };
  }

  /** The run a request is of: its connection's, when it came through a run's own listener, else its credentials'. */
  of(req: IncomingMessage): RunEntry | undefined {
    const pinned = this.pinned.get(req.socket);
    if (pinned) return this.runs.get(pinned.runId) === pinned ? pinned : undefined;
    return this.authenticate(req.headers['proxy-authorization']);
  }

  /** Counts `socket` among the run's open connections, cut when it closes. */
  track(run: RunEntry, socket: Duplex): void {
    if (run.sockets.has(socket)) return;
    run.sockets.add(socket);
    socket.once('close', () => run.sockets.delete(socket));
  }

  /** Forgets every run and cuts their connections. */
  closeAll(): void {
    for (const entry of [...this.runs.values()]) this.close(entry);
  }

  private add(
    runId: string,
    options: OpenRunOptions,
    tokenDigest: Buffer,
    unreachable: RunEntry['unreachable'] = 'page',
  ): RunEntry {
    if (runId === '' || runId.includes(':'))
      throw new Error('a run id for the egress proxy must be non-empty and have no ":"');
    if (this.runs.has(runId)) throw new Error(`run ${runId} already has egress open`);
    const policy = options.policy ?? this.policy;
    const entry: RunEntry = {
      runId,
      tokenDigest,
      policy,
      onBlocked: options.onBlocked,
      blocked: [],
      sockets: new Set(),
      unreachable,
    };
    this.runs.set(runId, entry);
    return entry;
  }

  private close(entry: RunEntry): void {
    if (this.runs.get(entry.runId) !== entry) return;
    this.runs.delete(entry.runId);
    for (const socket of entry.sockets) socket.destroy();
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
}
