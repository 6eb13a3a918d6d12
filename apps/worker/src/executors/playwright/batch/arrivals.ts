// The runs on their way to a Playwright batch's leader (docs/PLAYWRIGHT.md, "Batches"): a leader
// waits for the runs this worker's jobs have taken and are still preparing, so that those of its
// suite run join it (gather.ts).

import type { JobWatch } from '../../../run/executor';

/**
 * The runs this worker's jobs have taken and not yet brought to their executor (being claimed, their
 * secrets opened), and how many of its `slots` hold a job: a leader waits until none is on its way
 * (and, for a while, until no slot is idle), so that those of its suite run join it.
 */
export class Arrivals {
  private readonly pending = new Set<string>();
  private readonly waiters = new Set<() => void>();
  private jobs = 0;

  constructor(private readonly slots = 1) {}

  /** A slot took a job: its run is on its way until it `arrived` (at the latest when its execution ends). */
  jobTook(runId: string): void {
    this.jobs += 1;
    this.pending.add(runId);
  }

  /** A slot's job ended: the slot is idle again. */
  jobEnded(): void {
    this.jobs -= 1;
  }

  /** The run reached its executor (or ended before it): it is no longer on its way. */
  arrived(runId: string): void {
    if (!this.pending.delete(runId)) return;
    for (const waiter of this.waiters) waiter();
  }

  /**
   * Resolves once `enough()` holds, or no run is on its way and, for `graceMs`, no slot is idle;
   * after `boundMs` at the latest.
   */
  async settled(boundMs: number, enough: () => boolean, graceMs = 0): Promise<void> {
    let graceOver = graceMs <= 0;
    const ready = () => enough() || (this.pending.size === 0 && (graceOver || this.jobs >= this.slots));
    if (ready()) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(bound);
        clearTimeout(grace);
        this.waiters.delete(check);
        resolve();
      };
      const check = () => {
        if (ready()) done();
      };
      const bound = setTimeout(done, boundMs);
      const grace = graceOver
        ? undefined
        : setTimeout(() => {
            graceOver = true;
            check();
          }, graceMs);
      this.waiters.add(check);
    });
  }
}

/**
 * What the worker's jobs tell the leaders through `arrivals` (RunDeps.jobs): a run of another kind
 * than `kind` never joins a batch, so it is no longer on its way once claimed.
 */
export function arrivalsWatch(arrivals: Arrivals, kind: string): JobWatch {
  return {
    took: (runId) => arrivals.jobTook(runId),
    claimed: (run) => {
      if (run.kind !== kind) arrivals.arrived(run.id);
    },
    executed: (runId) => arrivals.arrived(runId),
    freed: () => arrivals.jobEnded(),
  };
}
