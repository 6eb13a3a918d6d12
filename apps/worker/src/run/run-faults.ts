import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * One run executing in this process, as its faults see it. It is found through the async context
 * of the code that failed (see {@link RunFaults}); a fault it is told of ends its attempt under way.
 */
export class RunOwner {
  /** False once the run's execution has returned: a fault raised later ends nothing. */
  live = true;
  /** Masks the run's secret values in a text; replaced as the run opens them. */
  mask: (text: string) => string = (text) => text;
  private reject: ((error: unknown) => void) | null = null;

  constructor(readonly runId: string) {}

  /**
   * Rejects with the next fault told of the run (see {@link fault}); the caller races its attempt
   * against it. A later call replaces the earlier watch: one attempt is watched at a time.
   */
  watch(): Promise<never> {
    const watched = new Promise<never>((_, reject) => {
      this.reject = reject;
    });
    // Nobody may be racing it any more by the time a late fault comes: never an unhandled rejection.
    watched.catch(() => undefined);
    return watched;
  }

  /** Ends the watch: a fault told after it reaches no attempt. */
  unwatch(): void {
    this.reject = null;
  }

  /** Tells the attempt under way of a fault of the run's; false when no attempt was watching. */
  fault(error: unknown): boolean {
    const reject = this.reject;
    this.reject = null;
    reject?.(error);
    return reject !== null;
  }
}

/**
 * Which run a fault belongs to. Each run executes inside an AsyncLocalStorage scope of its own, so
 * whatever its code schedules (an await's continuation, a timer, the answer to a Playwright call it
 * made, which Playwright's in-process connection delivers in a callback scheduled from the call)
 * carries the run, and an `uncaughtException` or `unhandledRejection` raised there names it.
 *
 * What is NOT attributable: callbacks scheduled from the process's shared parts, which were set up
 * outside every run (the browser's pipe, Redis, the egress proxy): among them Playwright's events
 * (a page's `response`, `close`...), which arrive from the browser's pipe. A throw from an event
 * handler therefore belongs to no run. The browser is launched outside every run even when a run's
 * call relaunches it ({@link outside}), so that its pipe never carries a run.
 */
export class RunFaults {
  private readonly storage = new AsyncLocalStorage<RunOwner>();
  private readonly owners = new Set<RunOwner>();

  /** Runs `work` as the run's own: what it schedules carries the returned owner. */
  async run<T>(runId: string, work: (owner: RunOwner) => Promise<T>): Promise<T> {
    const owner = new RunOwner(runId);
    this.owners.add(owner);
    try {
      return await this.storage.run(owner, () => work(owner));
    } finally {
      owner.live = false;
      this.owners.delete(owner);
    }
  }

  /** The run whose async context the caller is in; undefined outside every run. */
  current(): RunOwner | undefined {
    return this.storage.getStore();
  }

  /** Runs `work` outside every run's context: for what outlives the run that starts it. */
  outside<T>(work: () => T): T {
    return this.storage.exit(work);
  }

  /** Masks the secret values of every run executing here: for a fault that belongs to none. */
  maskAll(text: string): string {
    let masked = text;
    for (const owner of this.owners) masked = owner.mask(masked);
    return masked;
  }
}

/**
 * The attempt's outcome; rejects with a fault of the run's that no caller caught (the fault guard
 * tells the owner), closing the attempt's context under it: the attempt may be waiting on a call
 * that will never settle, and it unwinds in the background.
 */
export function untilFaulted<T>(
  attempt: Promise<T>,
  owner: RunOwner | null,
  scope: { forceClose?: () => void },
): Promise<T> {
  if (!owner) return attempt;
  const faulted = owner.watch().catch((error: unknown) => {
    scope.forceClose?.();
    throw error;
  });
  return Promise.race([attempt, faulted]).finally(() => owner.unwatch());
}
