// Gathering a batch's Playwright workers (docs/PLAYWRIGHT.md, "Batches"): the runs of one suite run
// that this worker's slots took at the same moment share one sandbox, one Playwright runner and
// its workers (one a slot), as `playwright test --workers=N` would run them, instead of each
// starting a sandbox and a runner of its own. The first to reach its executor leads; it waits for
// the others this worker has claimed and is still preparing (arrivals.ts), and those of the same suite
// run and settings join it: their jobs keep their slots for the batch, which runs one Playwright
// worker a slot.
import type { PlaywrightDefinition } from '@testrun/contracts';
import type { JoinedRun, PlaywrightBatch } from './batch';
import { deferred } from './deferred';

type Definition = PlaywrightDefinition['playwright'];

/** Longest a leader waits for the runs on their way to join it (they arrive within milliseconds). */
export const GATHER_BOUND_MS = 1_000;

/**
 * How long a leader waits for a job to come to an idle slot of this worker while its suite run has
 * runs queued: the queue hands a worker's slots their jobs one after the other, a few milliseconds
 * apart, and a leader whose claim was quicker would otherwise start alone.
 */
export const GATHER_GRACE_MS = 100;

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
    const { promise: told, resolve } = deferred<Gathered>();
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
