import { randomUUID } from 'node:crypto';
import type { Db } from '../db';
import { CLAIMED_COLUMNS, claimedRun, startRun, type ClaimedRow, type ClaimedRun } from './state';

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
 * read back, `prevStatus` null); not found, nothing was this claim's and the run is not claimable.
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
): () => Promise<ClaimedRun | null> {
  const token = randomUUID();
  let threw = false;
  return async () => {
    try {
      const claimed = await startRun(db, runId, maxAttempts, batchId, token);
      if (claimed || !threw) return claimed;
      return await earlierClaim(db, runId, token);
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
