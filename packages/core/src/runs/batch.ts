import { Prisma, type Db, type DbTx } from '../db';
import { planBatch, type BatchCandidate } from './batch-plan';
import { inGroup, liveRun, staysWithFile, wholeSuite } from './group';

/*
 * Playwright batches (docs/PLAYWRIGHT.md, "Batches"): the worker that claims a Playwright run of a
 * suite run reserves the suite run's other queued Playwright runs that can share its sandbox (same
 * bundle, config, target, time budget, retries and evidence policy), whole spec files at a time, so
 * a serial group is never split; a test Playwright may run apart from its file (`parallel`) is
 * taken alone, so a fully parallel file is shared out like Playwright's workers share it. A reserved run carries the batch's id and a lease the batch renews;
 * while the lease lives only that batch claims it (startRun) and the reconciler leaves its job alone.
 * When the worker dies the lease lapses and the runs' jobs run them as any other.
 */

/** How long a reservation lives without being renewed. */
export const BATCH_LEASE_MS = 60_000;

/** What decides a batch: the claimed run that leads it, and how its suite run is shared out. */
export interface BatchRequest {
  batchId: string;
  leaderId: string;
  /** Runs a worker runs at once: the suite run's runs are shared between that many batches. */
  share: number;
  /** Most runs in one batch a Playwright worker of it, the leader included. */
  maxRuns: number;
  /**
   * The suite run's runs this worker claimed at the same moment, which join the leader's batch (each
   * a Playwright worker of it more, holding its own slot): stamped with the batch like the leader.
   */
  joined?: readonly string[];
}

/**
 * Reserves the runs that join the leader's batch and returns their ids (the leader and the joined
 * runs, reserved too so that the batch's lease counts them, not among them).
 * Candidates are the suite run's queued runs of the same bundle and settings not reserved by a live
 * batch; which of them it takes is the sharing rule of batch-plan.ts (planBatch): the leader's spec
 * file first, then whole files in queue order, up to its share or `maxRuns`.
 */
export async function reserveBatch(db: Db, request: BatchRequest): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    const reserved = await tryReserve(db, request, attempt === CONTENDED_TRIES);
    if (reserved !== 'contended') return reserved;
    // Another leader of the suite run is reserving (its transaction lasts milliseconds): once it
    // has, this one takes its share of what is left, instead of running alone.
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 40));
  }
}

/** How often a reservation that finds candidates held by someone else tries again (about a second in all). */
const CONTENDED_TRIES = 25;

/** The leader's suite run's queued runs of the same bundle and settings that no live batch holds (`r`; `l` the leader). */
function candidatesOf(leaderId: string, running: readonly string[]): Prisma.Sql {
  return Prisma.sql`
      FROM runs l JOIN runs r ON r.suite_run_id = l.suite_run_id AND r.id <> l.id
      WHERE l.id = ${leaderId} AND r.status = 'queued' AND r.retry = 0
        AND (r.batch_lease_until IS NULL OR r.batch_lease_until < now())
        AND r.steps->'playwright'->>'bundle' = l.steps->'playwright'->>'bundle'
        AND r.steps->'playwright'->>'config' = l.steps->'playwright'->>'config'
        AND r.steps->'playwright'->>'browser' = 'chromium'
        AND r.base_url = l.base_url AND r.timeout_ms = l.timeout_ms AND r.retries = l.retries
        AND r.evidence IS NOT DISTINCT FROM l.evidence
        AND NOT EXISTS (${runningElsewhere(running)})`;
}

/**
 * A test of the candidate's group (group.ts: its file in its Playwright project, unless it runs apart:
 * `parallel`; the whole suite run with the config's `workers: 1`) that runs outside this batch, live (held by its worker or a batch): the group then
 * runs there, or after it (claim.ts GROUP_LOCK), never split between two Playwright workers.
 */
function runningElsewhere(running: readonly string[]): Prisma.Sql {
  return Prisma.sql`
    SELECT 1 FROM runs s WHERE s.suite_run_id = r.suite_run_id AND s.id <> r.id AND s.status = 'running'
      AND ${Prisma.raw(liveRun('s'))} AND NOT (s.id = ANY(${running}::text[]))
      AND ${Prisma.raw(inGroup('r', 's', { project: true, otherStays: false }))}`;
}

/** How many candidates there are, held by someone or not (no lock taken). */
async function candidateCount(tx: DbTx, leaderId: string, running: readonly string[]): Promise<number> {
  const [row] = await tx.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n ${candidatesOf(leaderId, running)}`;
  return row?.n ?? 0;
}

/**
 * One try of {@link reserveBatch}: 'contended' when candidates are held by another transaction
 * (another leader reserving, a claim, a cancel) and `last` is false: it then reserves nothing.
 */
async function tryReserve(db: Db, request: BatchRequest, last: boolean): Promise<string[] | 'contended'> {
  return db.$transaction(async (tx) => {
    // The leader and the joined runs first, in id order as a cancel locks them, then only rows no
    // one holds (SKIP LOCKED): this never deadlocks with a cancel or a claim.
    const running = [request.leaderId, ...(request.joined ?? [])];
    const locked = await tx.$queryRaw<Array<{ id: string; file: string | null }>>`
      SELECT id, steps->'playwright'->>'file' AS file FROM runs WHERE id = ANY(${running}::text[]) ORDER BY id FOR UPDATE`;
    const candidates = await tx.$queryRaw<BatchCandidate[]>`
      SELECT r.id, r.steps->'playwright'->>'file' AS file, NOT ${Prisma.raw(staysWithFile('r'))} AS parallel,
        (${Prisma.raw(wholeSuite('r'))}) IS TRUE AS "wholeSuite"
      ${candidatesOf(request.leaderId, running)}
      ORDER BY r.position
      FOR UPDATE OF r SKIP LOCKED`;
    if (!last && (await candidateCount(tx, request.leaderId, running)) > candidates.length) return 'contended';
    if (candidates.length === 0 && running.length === 1) return [];
    const [live] = await tx.$queryRaw<Array<{ batches: number }>>`
      SELECT count(DISTINCT r.batch_id)::int AS batches
      FROM runs l JOIN runs r ON r.suite_run_id = l.suite_run_id
      WHERE l.id = ${request.leaderId} AND r.batch_lease_until >= now() AND r.status IN ('queued', 'running')`;
    const ids = planBatch(candidates, {
      leading: running.map((id) => locked.find((row) => row.id === id)?.file ?? null),
      share: request.share,
      maxRuns: request.maxRuns,
      liveBatches: live?.batches ?? 0,
    });
    if (!ids) return [];
    await tx.$executeRaw`
      UPDATE runs SET batch_id = ${request.batchId},
        batch_lease_until = now() + make_interval(secs => ${BATCH_LEASE_MS / 1000})
      WHERE id = ANY(${[...running, ...ids]}::text[])`;
    return ids;
  });
}

/**
 * Renews the lease of the batch's runs that have not ended; returns how many there are. A run
 * someone holds right now (a cancel, its claim) is left for the next renewal: waiting for it could
 * deadlock, and the lease outlives many renewals.
 */
export async function renewBatch(db: Db, batchId: string): Promise<number> {
  await db.$executeRaw`
    WITH free AS (
      SELECT id FROM runs WHERE batch_id = ${batchId} AND status IN ('queued', 'running')
      ORDER BY id FOR UPDATE SKIP LOCKED)
    UPDATE runs SET batch_lease_until = now() + make_interval(secs => ${BATCH_LEASE_MS / 1000})
    WHERE id IN (SELECT id FROM free)`;
  const [live] = await db.$queryRaw<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM runs WHERE batch_id = ${batchId} AND status IN ('queued', 'running')`;
  return live?.n ?? 0;
}

/**
 * Frees the batch's runs that have not ended (their jobs, or the reconciler, run them); returns
 * their ids. Locks them in id order, as a cancel does.
 */
export async function releaseBatch(db: Db, batchId: string): Promise<string[]> {
  const rows = await db.$queryRaw<Array<{ id: string }>>`
    WITH open AS (
      SELECT id FROM runs WHERE batch_id = ${batchId} AND status IN ('queued', 'running') ORDER BY id FOR UPDATE)
    UPDATE runs SET batch_id = NULL, batch_lease_until = NULL
    WHERE id IN (SELECT id FROM open) RETURNING id`;
  return rows.map((row) => row.id);
}
