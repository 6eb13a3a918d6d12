import { randomUUID } from 'node:crypto';
import { readEvidencePolicy, type EvidencePolicy, type RunStatus } from '@testrun/contracts';
import type { Db, DbTx } from '../db';
import { ATTEMPT_DEADLINE } from './deadline';
import { inGroup, liveRun } from './group';
import { HOLD_LIVE } from './holds';
import { RUN_TIMES, SUITE_MOVE, type MovedRow } from './state';

/** What a worker needs of a run it claimed: its snapshot, read in the same statement as the claim. */
export type ClaimedRun = {
  attempt: number;
  /** What the run was before the claim; null when the claim was recognised after its reply was lost. */
  prevStatus: RunStatus | null;
  id: string;
  workspaceId: string;
  projectId: string;
  baseUrl: string;
  headersSealed: Uint8Array | null;
  variablesSealed: Uint8Array | null;
  /**
   * The kind of test the run executes (`steps`, `playwright`): the worker runs it with the executor
   * of that kind. Set when the run is created, from the form of its test's definition.
   */
  kind: string;
  steps: unknown;
  timeoutMs: number;
  /** What the run keeps as evidence, resolved when it was created (the default for older runs). */
  evidence: EvidencePolicy;
  /** The id of the API request that created the run, for the worker's log lines; null when unknown. */
  requestId: string | null;
  /** 0-based index of the test attempt this claim runs (see retryRun). */
  retry: number;
  /** Test attempts allowed after a failed or error one. */
  retries: number;
  /** Whether the request gave `retries` (0 included): a Playwright run then makes no retries of its config's. */
  retriesRequested: boolean;
  /** The suite run the run belongs to; null for a run of one test. */
  suiteRunId: string | null;
  /** Whether a cancel was asked before the claim (when no worker had the run to stop). */
  cancelRequested: boolean;
  /** How many of its suite run's runs were still queued right after a first claim; null when not known. */
  suiteQueued: number | null;
};

/** The columns of a claimed run's snapshot, as `r.<column>`. */
export const CLAIMED_COLUMNS =
  'r.id, r.attempt, r.workspace_id, r.project_id, r.base_url, r.headers_sealed, r.variables_sealed, r.kind, r.steps, r.timeout_ms, r.evidence, r.request_id, r.retry, r.retries, r.retries_requested, r.suite_run_id, r.cancel_requested_at IS NOT NULL AS cancel_requested';

/** A row of {@link CLAIMED_COLUMNS}, with the status the run had before the claim when it is known. */
export type ClaimedRow = {
  id: string;
  attempt: number;
  prev_status?: RunStatus;
  workspace_id: string;
  project_id: string;
  base_url: string;
  headers_sealed: Uint8Array | null;
  variables_sealed: Uint8Array | null;
  kind: string;
  steps: unknown;
  timeout_ms: number;
  evidence: unknown;
  request_id: string | null;
  retry: number;
  retries: number;
  retries_requested: boolean;
  suite_run_id: string | null;
  cancel_requested: boolean;
  suite_queued?: number | null;
};

export function claimedRun(row: ClaimedRow): ClaimedRun {
  return {
    attempt: row.attempt,
    prevStatus: row.prev_status ?? null,
    id: row.id,
    workspaceId: row.workspace_id,
    projectId: row.project_id,
    baseUrl: row.base_url,
    headersSealed: row.headers_sealed,
    variablesSealed: row.variables_sealed,
    kind: row.kind,
    steps: row.steps,
    timeoutMs: row.timeout_ms,
    evidence: readEvidencePolicy(row.evidence),
    requestId: row.request_id,
    retry: row.retry,
    retries: row.retries,
    retriesRequested: row.retries_requested,
    suiteRunId: row.suite_run_id,
    cancelRequested: row.cancel_requested,
    suiteQueued: row.suite_queued ?? null,
  };
}

/**
 * What a run that could not be claimed was when the claim looked: its status, its attempt, whether
 * a batch's live lease holds it, and whether a worker's live hold does (`held_until`: its worker is
 * alive and running it, whatever Redis says of its job).
 */
export type UnclaimedRun = {
  status: RunStatus;
  attempt: number;
  batchHeld: boolean;
  workerHeld: boolean;
  /**
   * Another test of its group runs elsewhere (a Playwright file's tests that do not run apart:
   * GROUP_LOCK): it waits, and runs in that test's batch or after it, as `playwright test` runs a
   * file's tests in one worker, in order.
   */
  groupBusy: boolean;
};

/** A claim's try: the run claimed, or what it was when it could not be (null: there is no such run). */
export type ClaimTry = { claimed: ClaimedRun } | { unclaimed: UnclaimedRun | null };

/**
 * Claims a run for a worker: `queued` → `running`, or a `running` run whose worker was lost taken
 * over by a new attempt while attempts remain (`maxAttempts` counts claims: a test retry takes a
 * new attempt too, see retryRun, so claims are `attempt - retry`); returns the new attempt and the
 * run's snapshot in the same statement. Null when the run is terminal or out of attempts (the
 * caller then ends it), while a Playwright batch other than `batchId` holds its lease (batch.ts), and
 * while a worker's hold of a `running` run is live: a live worker renews it (renewHolds), so a job
 * given to the run again (BullMQ's stalled check misjudging a busy worker, a reconciler pass after
 * Redis lost the job) never starts a second attempt beside the one still running. Once the hold
 * lapses (its worker is gone), the reconciler gives the run a job that takes it over.
 * `token`: the claim's own (runClaim); a run that already carries it is not claimed again. A worker
 * that must survive a lost reply claims through `runClaim` instead. `holdMs`: the claim holds the
 * run for that long (`held_until`, renewed by its worker: renewHolds); null holds nothing.
 */
export async function startRun(
  tx: DbTx,
  runId: string,
  maxAttempts: number,
  batchId: string | null = null,
  token: string | null = null,
  holdMs: number | null = null,
): Promise<ClaimedRun | null> {
  const tried = await claimTry(tx, runId, maxAttempts, batchId, token, holdMs);
  return 'claimed' in tried ? tried.claimed : null;
}

/** A claim's row: the run claimed, or only what it was (`id` null: not claimed). */
type TryRow = {
  state_status: RunStatus;
  state_attempt: number;
  state_held: boolean | null;
  state_worker_held: boolean | null;
  state_group_busy: boolean | null;
} & (ClaimedRow | { id: null });

/**
 * The runs of a Playwright run's group (group.ts: its file's runs in its Playwright project that stay
 * with the file, unless it runs apart itself; all its suite run's runs when its config says
 * `workers: 1`), the run itself included, locked in id order as a cancel
 * and every other claim of the group lock them. Locked, each row is read as last committed (not as
 * the statement's snapshot saw it), so of two claims of one group at once the second sees the
 * first's sibling running. A sibling counts while it is live: held by its worker (`held_until`) or
 * by a batch's lease; one whose worker died blocks nothing. Empty for any other run.
 */
const GROUP_LOCK = `
  SELECT s.id, s.status, s.batch_id, ${liveRun('s')} AS live
  FROM runs s JOIN runs o ON o.id = $1
  WHERE o.suite_run_id IS NOT NULL AND s.suite_run_id = o.suite_run_id
    AND o.steps ? 'playwright' AND s.steps ? 'playwright'
    AND ${inGroup('o', 's', { project: true, otherStays: true })}
  ORDER BY s.id FOR UPDATE OF s`;

/**
 * {@link startRun}, saying in the same statement what the run was when it could not be claimed
 * (a batched run's own job learns that its batch holds it without a read of its own).
 */
async function claimTry(
  tx: DbTx,
  runId: string,
  maxAttempts: number,
  batchId: string | null,
  token: string | null,
  holdMs: number | null,
): Promise<ClaimTry> {
  const rows = await tx.$queryRawUnsafe<Array<TryRow & Partial<Pick<MovedRow, 'new_status'>>>>(
    `WITH g AS (${GROUP_LOCK}),
     p AS (
       SELECT id, status AS prev_status, attempt AS prev_attempt, batch_lease_until >= now() AS prev_held,
         status = 'running' AND ${HOLD_LIVE} AS prev_worker_held,
         (SELECT count(*) FILTER (WHERE g.id <> $1 AND g.status = 'running' AND g.live
           AND ($3::text IS NULL OR g.batch_id IS DISTINCT FROM $3)) FROM g) > 0 AS prev_group_busy
       FROM runs WHERE id = $1 FOR UPDATE),
     u AS (
       UPDATE runs r SET status = 'running'::"RunStatus", attempt = r.attempt + 1,
         started_at = CASE WHEN r.retry = 0 THEN now() ELSE r.started_at END,
         deadline_at = ${ATTEMPT_DEADLINE}, result_summary = 'Running.',
         claim_token = $4, held_until = now() + make_interval(secs => $5::int / 1000.0)
       FROM p WHERE r.id = p.id AND r.status IN ('queued', 'running') AND r.attempt - r.retry < $2
         AND (r.batch_lease_until IS NULL OR r.batch_lease_until < now() OR r.batch_id = $3)
         AND ($4::text IS NULL OR r.claim_token IS DISTINCT FROM $4)
         AND NOT p.prev_worker_held AND NOT p.prev_group_busy
       RETURNING ${CLAIMED_COLUMNS}, p.prev_status, r.status AS new_status, ${RUN_TIMES}),
     s AS (${SUITE_MOVE} RETURNING s.queued_count)
     SELECT u.*, (SELECT s.queued_count FROM s) AS suite_queued,
       p.prev_status AS state_status, p.prev_attempt AS state_attempt, p.prev_held AS state_held,
       p.prev_worker_held AS state_worker_held, p.prev_group_busy AS state_group_busy
     FROM p LEFT JOIN u ON true`,
    runId,
    maxAttempts,
    batchId,
    token,
    holdMs,
  );
  const row = rows[0];
  if (!row) return { unclaimed: null };
  if (row.id === null)
    return {
      unclaimed: {
        status: row.state_status,
        attempt: row.state_attempt,
        batchHeld: row.state_held === true,
        workerHeld: row.state_worker_held === true,
        groupBusy: row.state_group_busy === true,
      },
    };
  return { claimed: claimedRun(row) };
}

/**
 * A claim of a run (`startRun`) that may be tried again after it threw, as often as the caller likes,
 * without ever claiming twice: each call is one try.
 *
 * The claim is one statement, so one round trip and one commit. When Postgres goes away between
 * that commit and its reply, the worker cannot tell whether it holds the run, and simply claiming
 * again would take a new attempt over its own (attempt + 1): one of the run's few attempts burnt,
 * and after two lost replies the run ended `worker_lost` with nothing wrong with it. So every try
 * writes the same token, made here once per claim, into the run (`claim_token`), and a try never
 * claims a run that already carries it. A try after one that threw that claims nothing reads the
 * run by its token: found, the earlier try committed and the run is this claim's (its snapshot is
 * read back, `prevStatus` null); not found, nothing was this claim's and the run is not claimable
 * (what it was, the try's own statement said).
 * An earlier try still open in Postgres (the server has not yet seen its connection drop) holds the
 * run's row lock, so the next try waits for it to end and then decides as above.
 *
 * Why a token of the claim's own and not something of the job's: a job the reconciler adds again
 * starts its delivery counters over, so two deliveries could share a number.
 */
export function runClaim(
  db: Db,
  runId: string,
  maxAttempts: number,
  batchId: string | null = null,
  holdMs: number | null = null,
): () => Promise<ClaimTry> {
  const token = randomUUID();
  let threw = false;
  return async () => {
    try {
      const tried = await claimTry(db, runId, maxAttempts, batchId, token, holdMs);
      if ('claimed' in tried || !threw) return tried;
      const earlier = await earlierClaim(db, runId, token);
      return earlier ? { claimed: earlier } : tried;
    } catch (error) {
      threw = true;
      throw error;
    }
  };
}

/** The run as an earlier try of this claim (`token`) claimed it, while it is still that claim's and running. */
async function earlierClaim(db: Db, runId: string, token: string): Promise<ClaimedRun | null> {
  const rows = await db.$queryRawUnsafe<ClaimedRow[]>(
    `SELECT ${CLAIMED_COLUMNS} FROM runs r WHERE r.id = $1 AND r.status = 'running' AND r.claim_token = $2`,
    runId,
    token,
  );
  const row = rows[0];
  return row ? claimedRun(row) : null;
}
