import { RUN_STATUSES, type Run, type RunStatus, type SuiteRun } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import { readFingerprints } from '@testrun/core/runs';
import type { ApiConfig } from '../config';

/** The longest wait a client may ask for with `Prefer: wait=N`, in seconds (a larger N is cut to it). */
const MAX_WAIT_SECONDS = 60;

/** How often the watcher looks at the resources it has waiters for. */
const CHECK_INTERVAL_MS = 250;

/**
 * `wait=N` of a Prefer header (RFC 7240), cut to {@link MAX_WAIT_SECONDS}; null when the header
 * asks for no wait or names it in a form that is not a whole number of seconds (ignored, as
 * RFC 7240 says a preference the server does not understand is).
 */
export function preferredWait(header: string | undefined): number | null {
  if (!header) return null;
  for (const part of header.split(',')) {
    const match = /^\s*wait\s*=\s*"?(\d{1,9})"?\s*(?:;.*)?$/i.exec(part);
    if (match) return Math.min(Number(match[1]), MAX_WAIT_SECONDS);
  }
  return null;
}

/**
 * What a long poll watches of a resource: its status and, for a suite run, how many children are in
 * each status and how many setup test executions it recorded (docs/PLAYWRIGHT.md, "Setup projects").
 */
export function runFingerprint(run: Run): string {
  return run.status;
}

export function suiteRunFingerprint(suiteRun: SuiteRun): string {
  const counts: Record<RunStatus, number> = { queued: 0, running: 0, passed: 0, failed: 0, error: 0, skipped: 0 };
  for (const test of suiteRun.tests) counts[test.status]++;
  const setups = (suiteRun.setup_tests ?? []).reduce((sum, setup) => sum + setup.executions, 0);
  return [suiteRun.status, ...RUN_STATUSES.map((s) => counts[s]), setups].join('|');
}

type Kind = 'run' | 'suite-run';
/** What a wait watches, and whose share of the replica's places it takes. */
type WaitTarget = { kind: Kind; id: string; workspaceId: string };
/** How a wait ended: the resource changed, the time ran out, or the replica is stopping. */
export type WaitOutcome = 'changed' | 'timeout' | 'closed';

interface Waiter {
  seen: string;
  finish: (outcome: WaitOutcome) => void;
}

/**
 * Holds the long polls of one API replica. Whichever process changes a run (a worker, another
 * replica), the watcher sees it: every {@link CHECK_INTERVAL_MS} while anyone waits, one statement
 * reads the status of every run and the counters of every suite run waited for, and wakes the
 * waiters whose resource no longer looks as it did when they read it. At most `longPollMaxWaiters`
 * requests wait at once, and at most `longPollMaxWaitersPerWorkspace` of one workspace, so one
 * tenant cannot take every place of the replica; past either a request is answered at once, as if
 * it had not asked to wait.
 */
export class ChangeWatcher {
  /** The waits of each resource, by kind and id. */
  private readonly waiters: Record<Kind, Map<string, Set<Waiter>>> = { run: new Map(), 'suite-run': new Map() };
  private count = 0;
  /** Waits held for each workspace; a workspace without any has no entry. */
  private readonly byWorkspace = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly caps: Pick<ApiConfig, 'longPollMaxWaiters' | 'longPollMaxWaitersPerWorkspace'>,
  ) {}

  /** Requests waiting now. */
  get waiting(): number {
    return this.count;
  }

  /**
   * Waits until the resource's fingerprint differs from `seen`, `ms` pass, `signal` aborts (the
   * client left) or the replica stops. Null when the replica already holds its cap of waits, the
   * workspace its share, or the replica is stopping: the caller answers at once.
   */
  wait(target: WaitTarget, seen: string, ms: number, signal: AbortSignal): Promise<WaitOutcome> | null {
    const { kind, id, workspaceId } = target;
    const held = this.byWorkspace.get(workspaceId) ?? 0;
    if (this.closed || this.count >= this.caps.longPollMaxWaiters) return null;
    if (held >= this.caps.longPollMaxWaitersPerWorkspace) return null;
    const byId = this.waiters[kind];
    return new Promise<WaitOutcome>((resolve) => {
      const waiter: Waiter = {
        seen,
        finish: (outcome) => {
          clearTimeout(timeout);
          signal.removeEventListener('abort', abort);
          const set = byId.get(id);
          if (!set?.delete(waiter)) return;
          this.count--;
          this.release(workspaceId);
          if (set.size === 0) byId.delete(id);
          if (this.count === 0) this.stopTimer();
          resolve(outcome);
        },
      };
      const timeout = setTimeout(() => waiter.finish('timeout'), ms);
      const abort = () => waiter.finish('closed');
      signal.addEventListener('abort', abort, { once: true });
      const set = byId.get(id) ?? new Set<Waiter>();
      set.add(waiter);
      byId.set(id, set);
      this.count++;
      this.byWorkspace.set(workspaceId, (this.byWorkspace.get(workspaceId) ?? 0) + 1);
      this.timer ??= setInterval(() => void this.check(), CHECK_INTERVAL_MS);
    });
  }

  /** Ends every wait now (the replica is stopping): each request answers with what it has. */
  close(): void {
    this.closed = true;
    for (const byId of Object.values(this.waiters)) {
      for (const set of [...byId.values()]) for (const waiter of [...set]) waiter.finish('closed');
    }
    this.stopTimer();
  }

  private release(workspaceId: string): void {
    const held = (this.byWorkspace.get(workspaceId) ?? 1) - 1;
    if (held > 0) this.byWorkspace.set(workspaceId, held);
    else this.byWorkspace.delete(workspaceId);
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private checking = false;

  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    const runIds = [...this.waiters.run.keys()];
    const suiteRunIds = [...this.waiters['suite-run'].keys()];
    try {
      const rows = await readFingerprints(this.db, runIds, suiteRunIds);
      for (const row of rows) {
        for (const waiter of [...(this.waiters[row.kind].get(row.id) ?? [])]) {
          if (waiter.seen !== row.fingerprint) waiter.finish('changed');
        }
      }
    } catch (error) {
      // Postgres is away: the waits run to their time-out and the requests answer then.
      this.logger.warn('long poll check failed', { error: error instanceof Error ? error.message : String(error) });
    } finally {
      this.checking = false;
    }
  }
}

/** A resource read for a GET that may wait: how to read it, whether it is final, what a change is. */
export interface WaitableRead<T> extends WaitTarget {
  read: () => Promise<T>;
  isFinal: (value: T) => boolean;
  fingerprint: (value: T) => string;
}

/**
 * Reads a resource; with `Prefer: wait=N` and the resource not final, waits for it to change (or N
 * seconds) and reads it again. `applied` is the wait honoured, for `Preference-Applied`; null when
 * none was asked for or the replica (or the workspace's share of it) was full.
 */
export async function readWithWait<T>(
  watcher: ChangeWatcher,
  prefer: string | undefined,
  signal: AbortSignal,
  target: WaitableRead<T>,
): Promise<{ value: T; applied: number | null }> {
  const value = await target.read();
  const wait = preferredWait(prefer);
  if (wait === null) return { value, applied: null };
  if (wait === 0 || target.isFinal(value)) return { value, applied: wait };
  const waiting = watcher.wait(target, target.fingerprint(value), wait * 1000, signal);
  if (!waiting) return { value, applied: null };
  await waiting;
  return { value: await target.read(), applied: wait };
}
