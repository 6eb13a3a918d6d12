import type { Db } from '../db';
import { CLAIMED_COLUMNS, claimedRun, startRun, type ClaimedRow, type ClaimedRun } from './state';

/**
 * A claim of a run (`startRun`) that may be tried again after it threw, as often as the caller likes,
 * without ever claiming twice: each call is one try.
 *
 * The claim is one commit. When Postgres goes away between that COMMIT and its reply, the worker
 * cannot tell whether it holds the run, and simply claiming again would take a new attempt over its
 * own (attempt + 1): one of the run's few attempts burnt, and after two lost replies the run ended
 * `worker_lost` with nothing wrong with it. So each try first takes its transaction's id
 * (`txid_current()`) and claims inside that transaction; the next try asks Postgres what became of
 * it (`txid_status`, kept across restarts for exactly this question). Committed: the row version
 * that transaction wrote (its `xmin`) is this claim's own, so the snapshot is read back instead of
 * claimed again. Aborted or unknown: nothing happened, claim anew. Still in progress: the server has
 * not yet seen the connection drop, so the try fails and is made again later.
 *
 * Why the transaction id and not something of the job's: a job the reconciler adds again starts its
 * delivery counters over, so two deliveries could share a number, whereas only the transaction that
 * wrote a row version has its id; and it needs no claim-token column (no migration).
 */
export function runClaim(
  db: Db,
  runId: string,
  maxAttempts: number,
  batchId: string | null = null,
): () => Promise<ClaimedRun | null> {
  let previous: string | null = null;
  return async () => {
    if (previous !== null) {
      const earlier = await earlierClaim(db, runId, previous);
      if (earlier) return earlier;
      previous = null;
    }
    return db.$transaction(async (tx) => {
      const [own] = await tx.$queryRaw<Array<{ xid: string }>>`SELECT txid_current()::text AS xid`;
      previous = own?.xid ?? null;
      return startRun(tx, runId, maxAttempts, batchId);
    });
  };
}

/**
 * The run as the earlier try (transaction `xid`) claimed it, when that try committed and its row
 * version is still the run's newest; null when it did not commit, claimed nothing, or the run has
 * moved on since (then a fresh claim decides).
 */
async function earlierClaim(db: Db, runId: string, xid: string): Promise<ClaimedRun | null> {
  const [state] = await db.$queryRaw<Array<{ status: string | null }>>`SELECT txid_status(${xid}::bigint) AS status`;
  if (state?.status === 'in progress') throw new Error('the previous claim of this run is still open in Postgres');
  if (state?.status !== 'committed') return null;
  const rows = await db.$queryRawUnsafe<ClaimedRow[]>(
    `SELECT ${CLAIMED_COLUMNS} FROM runs r
     WHERE r.id = $1 AND r.status = 'running' AND r.xmin::text::bigint = $2::bigint % 4294967296`,
    runId,
    xid,
  );
  const row = rows[0];
  return row ? claimedRun(row) : null;
}
