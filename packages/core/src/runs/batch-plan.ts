/*
 * The sharing rule of Playwright batches (docs/PLAYWRIGHT.md, "Batches"), without the database:
 * which of a suite run's queued runs go into a leader's batch, and how many Playwright workers it
 * runs. Playwright's semantics: the tests of a spec file share a worker unless their test may run
 * apart (`parallel`); with the config's `workers: 1` the whole suite run is one group. A batch
 * takes the groups of the runs it leads whole, then whole groups in queue order up to its share of
 * the suite run. reserveBatch (batch.ts) reads the candidates and the live batches and applies it.
 */

/** A queued run a batch may take, as its reservation reads it. */
export interface BatchCandidate {
  id: string;
  /** Its spec file (null: its step names none). */
  file: string | null;
  /** Whether Playwright may run its test apart from its file (`fullyParallel` or a parallel describe). */
  parallel: boolean;
  /** Whether its config says `workers: 1`: its group is the whole suite run. */
  wholeSuite: boolean;
}

/** What a batch goes by: the runs it leads (their spec files) and how its suite run is shared out. */
export interface BatchShare {
  /** The spec files of the runs the batch leads (the leader and the runs that joined it), one a Playwright worker. */
  leading: readonly (string | null)[];
  /** Runs a worker runs at once: the suite run's runs are shared between that many batches. */
  share: number;
  /** Most runs in one batch a Playwright worker of it, the leader included. */
  maxRuns: number;
  /** The suite run's other batches whose lease lives. */
  liveBatches: number;
}

/**
 * What the candidate goes into a batch with, whole: '' for every run of a `workers: 1` suite run,
 * its own id when its test runs apart, else its spec file (of every Playwright project).
 */
export function groupOf(candidate: BatchCandidate): string {
  if (candidate.wholeSuite) return '';
  if (candidate.parallel) return candidate.id;
  return candidate.file ?? '';
}

/**
 * Whether the candidate is of the group of a run the batch leads (a serial group stays whole): its
 * suite run is one group (`workers: 1`), or its test stays with its file and a led run is of that file.
 */
export function leadsGroupOf(candidate: BatchCandidate, leading: readonly (string | null)[]): boolean {
  if (candidate.wholeSuite) return true;
  return !candidate.parallel && candidate.file !== null && leading.includes(candidate.file);
}

/**
 * How many candidates a batch of `workers` Playwright workers takes (before whole groups round it
 * up): its share of the candidates and its own runs, divided by the ways still free (at least its
 * own workers), at most `maxRuns` a worker.
 */
export function batchSize(candidates: number, workers: number, share: Omit<BatchShare, 'leading'>): number {
  const ways = Math.max(workers, share.share - share.liveBatches);
  const total = candidates + workers;
  return Math.min(share.maxRuns * workers, Math.ceil((total * workers) / ways)) - workers;
}

/**
 * The candidates (in queue order) the batch takes: those of its led runs' groups first, then whole
 * groups in queue order while fewer than its size are taken. Null: the batch would hold the leader
 * alone (it runs alone, reserving nothing).
 */
export function planBatch(candidates: readonly BatchCandidate[], share: BatchShare): string[] | null {
  const workers = share.leading.length;
  const size = batchSize(candidates.length, workers, share);
  const ids = candidates.filter((c) => leadsGroupOf(c, share.leading)).map((c) => c.id);
  const rest = candidates.filter((c) => !leadsGroupOf(c, share.leading));
  const groups: string[] = [];
  for (const candidate of rest) if (!groups.includes(groupOf(candidate))) groups.push(groupOf(candidate));
  for (const group of groups) {
    if (ids.length >= size) break;
    ids.push(...rest.filter((c) => groupOf(c) === group).map((c) => c.id));
  }
  return ids.length === 0 && workers === 1 ? null : ids;
}

/**
 * How many Playwright workers a batch runs: one for each slot it holds (the leader's and each
 * joined run's), at most the config's own `workers` when it gives a number.
 */
export function batchWorkers(slots: number, configWorkers: number | undefined): number {
  return Math.min(slots, configWorkers ?? slots);
}
