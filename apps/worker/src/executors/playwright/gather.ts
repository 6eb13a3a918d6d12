// Gathering a batch's Playwright workers (docs/PLAYWRIGHT.md, "Batches"): the runs of one suite run
// that this worker's slots took at the same moment share one sandbox, one Playwright runner and
// its workers (one a slot), as `playwright test --workers=N` would run them, instead of each
// starting a sandbox and a runner of its own. The first to reach its executor leads; it waits for
// the others this worker has claimed and is still preparing (Arrivals), and those of the same suite
// run and settings join it: their jobs keep their slots for the batch, which runs one Playwright
// worker a slot.
import type { PlaywrightDefinition } from '@testrun/contracts';
import type { JoinedRun, PlaywrightBatch } from './batch';

type Definition = PlaywrightDefinition['playwright'];

/** Longest a leader waits for the runs on their way to join it (they arrive within milliseconds). */
export const GATHER_BOUND_MS = 1_000;

/**
 * The runs this worker's jobs have taken and not yet brought to their executor (being claimed, their
 * secrets opened): a leader waits until none is on its way, so that those of its suite run join it.
 */
export class Arrivals {
  private readonly pending = new Set<string>();
  private readonly waiters = new Set<() => void>();

  begin(runId: string): void {
    this.pending.add(runId);
  }

  /** The run reached its executor (or ended before it): it is no longer on its way. */
  arrived(runId: string): void {
    if (!this.pending.delete(runId)) return;
    for (const waiter of this.waiters) waiter();
  }

  /** Resolves once no run is on its way or `enough()` holds, after `boundMs` at the latest. */
  async settled(boundMs: number, enough: () => boolean): Promise<void> {
    if (this.pending.size === 0 || enough()) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const check = () => {
        if (this.pending.size === 0 || enough()) done();
      };
      const timer = setTimeout(done, boundMs);
      this.waiters.add(check);
    });
  }
}

/** What a joined run is told: the batch it is a member of and the work its job keeps its slot for; null: run alone. */
export type Gathered = { batch: PlaywrightBatch; work: Promise<unknown> } | null;

/** A leader's gathering while it is open. */
export interface Gathering {
  readonly joined: JoinedRun[];
  /** Tells every joined run its batch (or null); call exactly once. */
  resolve(gathered: Gathered): void;
}

/** An open gathering, with the promise its joined runs wait on. */
type Open = Gathering & { told: Promise<Gathered> };

/** The open gatherings of this worker, by what a batch's runs share (gatherKey). */
export class Gatherings {
  private readonly open = new Map<string, Open>();

  /** Joins the open gathering of `key`: its batch to come; null when none is open (the caller leads). */
  join(key: string, run: JoinedRun): Promise<Gathered> | null {
    const gathering = this.open.get(key);
    if (!gathering) return null;
    gathering.joined.push(run);
    return gathering.told;
  }

  /** Opens the gathering of `key` for a leader; `close` it before its batch starts. */
  lead(key: string): Gathering & { close: () => void } {
    let tell: (gathered: Gathered) => void = () => undefined;
    const told = new Promise<Gathered>((resolve) => {
      tell = resolve;
    });
    const resolve = (gathered: Gathered) => tell(gathered);
    const gathering: Open = { joined: [], told, resolve };
    this.open.set(key, gathering);
    const close = () => {
      if (this.open.get(key) === gathering) this.open.delete(key);
    };
    return { joined: gathering.joined, resolve, close };
  }
}

/** What runs must share to run in one sandbox (as core's reserveBatch selects them). */
export function gatherKey(
  run: {
    suiteRunId: string | null;
    baseUrl: string | null;
    timeoutMs: number;
    retries: number;
    retriesRequested: boolean;
    evidence: unknown;
  },
  definition: Definition,
): string {
  return JSON.stringify([
    run.suiteRunId,
    definition.bundle,
    definition.config,
    run.baseUrl,
    run.timeoutMs,
    run.retries,
    run.retriesRequested,
    run.evidence,
  ]);
}
