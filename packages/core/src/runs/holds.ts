import type { Db } from '../db';

/**
 * SQL: whether the hold of the row's run (`held_until`) is live, true or false (never null): its
 * worker renewed it within WORKER_LOCK_DURATION_MS, so it is alive and running the run. The one
 * test the claim, abortRun's `unlessHeld` and the reconciler share.
 */
export const HOLD_LIVE = 'coalesce(held_until > now(), false)';

/**
 * Renews the hold of a worker's running runs: `held_until` moves to `holdMs` from now, in one
 * statement for all of them. A run's claim takes its first hold (startRun's `holdMs`); while its
 * worker lives and renews it, the reconciler gives a run whose job is gone (Redis flushed or
 * restarted empty) no new job, because its worker is still running it and will record it
 * (docs/WORKER.md, "At least once, stalls and the reconciler"). Returns how many runs were renewed
 * (those still running).
 */
export async function renewHolds(db: Db, runIds: readonly string[], holdMs: number): Promise<number> {
  if (runIds.length === 0) return 0;
  return db.$executeRaw`
    UPDATE runs SET held_until = now() + make_interval(secs => ${holdMs}::int / 1000.0)
    WHERE id = ANY(${runIds}::text[]) AND status = 'running'`;
}
