import type { Duplex } from 'node:stream';
import type { LookupAll, TargetBlockRule, TargetPolicy } from '@testrun/core/target-policy';

/** One request the policy refused, as the run learns of it. Never anything the target would have answered. */
export interface BlockedRequest {
  runId: string;
  /** Host as the page asked for it (a name, or an address). */
  host: string;
  port: number;
  rule: TargetBlockRule;
  /** A sentence naming the host and the rule, fit for the run's summary. */
  detail: string;
  /** When the request reached the proxy (ms since the epoch): the moment the page or the code asked. */
  askedAt: number;
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

/** A run's own listener on the proxy ({@link EgressProxy.openRunListener}): no credentials, it is the run's. */
export interface RunListener {
  /** `http://127.0.0.1:<port>` of a listener on loopback; none for one on a Unix socket. */
  readonly url: string | undefined;
  /** The Unix socket it listens on, when asked for one. */
  readonly socketPath: string | undefined;
  /** Refused requests in order (the first 100 are kept). */
  readonly blocked: readonly BlockedRequest[];
  /** Stops listening, forgets the run and cuts its open connections. */
  close(): void;
}

/** What the proxy holds of one open run. */
export interface RunEntry {
  runId: string;
  tokenDigest: Buffer;
  policy: TargetPolicy;
  onBlocked: ((blocked: BlockedRequest) => void) | undefined;
  blocked: BlockedRequest[];
  sockets: Set<Duplex>;
  /**
   * How a plain HTTP request whose target cannot be reached is answered: `page`, the proxy's 502
   * naming the network error in a header (the worker's own Chromium: step tests read it); `reset`,
   * the page's connection cut with no answer, so that Playwright's `page.goto` and `request` throw
   * as they do when they connect themselves (a run's own listener: Playwright Test in a sandbox).
   */
  unreachable: 'page' | 'reset';
}
