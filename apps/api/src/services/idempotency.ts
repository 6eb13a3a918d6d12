import { compileValidator, IDEMPOTENCY_KEY_RULE, isIdempotencyKey, Problem } from '@testrun/contracts';
import type { Db, DbTx } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import { hmacHex } from '@testrun/core/secrets';
import { ApiError, errorMessage, problemBody } from '../errors';

/**
 * The Idempotency-Key protocol of POST /api/v1/runs as one service: claim the key, replay a kept
 * response, or create and keep the response in the creating transaction (a kept 404/422 is stored
 * after it), and release the key on any other failure so a retry can run.
 */

/** How long a key is remembered, from the first request that used it. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a key stays held without a heartbeat from its request. The live request renews it every
 * {@link LEASE_HEARTBEAT_MS}, however long its transaction takes; a request whose process died stops
 * renewing, so a retry takes the key over within this time instead of waiting for a long lease.
 */
const IDEMPOTENCY_LEASE_MS = 5_000;
/** How often the request holding a key renews its lease. */
const LEASE_HEARTBEAT_MS = 1_500;
/** Error statuses whose response is kept and replayed; any other releases the key. */
const KEPT_ERROR_STATUSES = new Set([404, 422]);

/** Checks the Idempotency-Key header by the contract's rule; null when the request has none. */
export function readIdempotencyKey(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!isIdempotencyKey(value)) {
    throw new ApiError('invalid_body', `The Idempotency-Key header must be ${IDEMPOTENCY_KEY_RULE}.`, {
      errors: [{ path: 'header:Idempotency-Key', message: `must be ${IDEMPOTENCY_KEY_RULE}` }],
    });
  }
  return value;
}

/** JSON with object keys sorted at every level, so equal requests hash equally whatever their key order. */
function canonicalJson(value: unknown): string {
  // A request without a body hashes like a JSON null.
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** Keyed hash of a request: tells a replay (same hash) from a reuse with another body. */
export function hashRequest(key: Buffer, method: string, path: string, body: unknown): string {
  return hmacHex(key, canonicalJson({ method, path, body }));
}

type IdempotencyScope = { workspaceId: string; key: string };
type IdempotencyClaim = { kind: 'owner'; lease: Date } | { kind: 'replay'; status: number; body: unknown };

/** What the protocol needs besides the request: the database, the hash key, the clock and a log. */
export type IdempotencyContext = { db: Db; hashKey: Buffer; now: Date; logger: Logger };

/** The request as the protocol sees it; `key` is null when it carries no Idempotency-Key. */
export type IdempotentRequest = {
  workspaceId: string;
  key: string | null;
  method: string;
  path: string;
  body: unknown;
};

/** Stores the 201 body inside the creating transaction, so the runs and their replay commit together. */
export type KeepResponse = (tx: DbTx, body: unknown) => Promise<void>;

/** Either what `create` made now, or the kept success response of an earlier request with the key. */
export type IdempotentOutcome<T> = { kind: 'created'; value: T } | { kind: 'replayed'; status: number; body: unknown };

const isProblem = compileValidator(Problem);

/**
 * Runs `create` at most once per key: without a key it simply runs; with one it claims the key
 * (409 while another request holds it, 422 when it was used with another request), replays a kept
 * response, or runs `create`, which must call `keep` in its transaction. A kept 404/422 is stored
 * and rethrown; any other failure releases the key. A replayed problem is thrown as the same
 * ApiError, so the one error writer sends it (with `Idempotent-Replayed: true`).
 */
export async function runIdempotently<T>(
  ctx: IdempotencyContext,
  request: IdempotentRequest,
  create: (keep: KeepResponse | undefined) => Promise<T>,
): Promise<IdempotentOutcome<T>> {
  if (request.key === null) return { kind: 'created', value: await create(undefined) };
  const { db, now, logger } = ctx;
  const scope = { workspaceId: request.workspaceId, key: request.key };
  const claim = await claimIdempotencyKey(
    db,
    scope,
    hashRequest(ctx.hashKey, request.method, request.path, request.body),
    now,
  );
  if (claim.kind === 'replay') {
    if (claim.status < 400) return { kind: 'replayed', status: claim.status, body: claim.body };
    throw replayedProblem(claim.body);
  }
  const heartbeat = startLeaseHeartbeat(db, scope, claim.lease, now, logger);
  try {
    const value = await create(async (tx, body) => {
      await completeIdempotencyKey(tx, scope, await heartbeat.stop(), 201, body);
    });
    return { kind: 'created', value };
  } catch (e) {
    const lease = await heartbeat.stop();
    if (e instanceof ApiError && KEPT_ERROR_STATUSES.has(e.status)) {
      await completeIdempotencyKey(db, scope, lease, e.status, problemBody(e.code, e.detail, e.options.errors));
    } else {
      await releaseIdempotencyKey(db, scope, lease).catch((error: unknown) => {
        logger.warn('could not release an idempotency key', { error: errorMessage(error) });
      });
    }
    throw e;
  }
}

/**
 * Renews the lease of a held key until stopped. Each renewal is fenced on the lease it replaces,
 * so a request that lost its key (another took it over) never takes it back. `stop` waits for a
 * renewal in flight and gives the lease in force, the fence for completing or releasing the key.
 */
function startLeaseHeartbeat(
  db: Db,
  scope: IdempotencyScope,
  first: Date,
  claimedAt: Date,
  logger: Logger,
): { stop: () => Promise<Date> } {
  const startedAt = Date.now();
  const state: { lease: Date; stopped: boolean; wake: () => void } = { lease: first, stopped: false, wake: () => {} };
  // A function, not a flag read inline: stop() sets it while this loop awaits.
  const stopped = () => state.stopped;
  const loop = (async () => {
    while (!stopped()) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, LEASE_HEARTBEAT_MS);
        state.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (stopped()) return;
      // The request's clock moves with real time from the claim, so leases agree with claimIdempotencyKey.
      const next = new Date(claimedAt.getTime() + (Date.now() - startedAt) + IDEMPOTENCY_LEASE_MS);
      try {
        const renewed = await db.$executeRaw`
          UPDATE idempotency_records SET locked_until = ${next}
          WHERE workspace_id = ${scope.workspaceId} AND key = ${scope.key} AND state = 'in_progress' AND locked_until = ${state.lease}`;
        if (renewed !== 1) return; // taken over: completing will fail with 409 and roll back
        state.lease = next;
      } catch (error) {
        logger.warn('could not renew an idempotency lease', { error: errorMessage(error) });
      }
    }
  })();
  return {
    stop: async () => {
      state.stopped = true;
      state.wake();
      await loop;
      return state.lease;
    },
  };
}

/** The kept problem of a first response, as the error to send again. */
function replayedProblem(kept: unknown): ApiError {
  const problem = isProblem(kept);
  if (!problem.ok) throw new Error('a kept idempotent response is not a problem document');
  const { code, detail, errors } = problem.value;
  return new ApiError(code, detail, { errors, headers: { 'Idempotent-Replayed': 'true' } });
}

type RecordRow = {
  request_hash: string;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_body: unknown;
  locked_until: Date;
  expires_at: Date;
};

/**
 * Claims a key for this request, or says what to answer instead. The row in Postgres is the lock:
 * INSERT … ON CONFLICT DO NOTHING decides the first request among concurrent duplicates on every
 * replica; a lease lets a later request take over a key whose holder died; an expired record is
 * taken over as if it did not exist.
 */
async function claimIdempotencyKey(
  db: Db,
  scope: IdempotencyScope,
  requestHash: string,
  now: Date,
): Promise<IdempotencyClaim> {
  const lease = new Date(now.getTime() + IDEMPOTENCY_LEASE_MS);
  const expires = new Date(now.getTime() + IDEMPOTENCY_TTL_MS);
  for (let attempt = 0; attempt < 4; attempt++) {
    const inserted = await db.$queryRaw<unknown[]>`
      INSERT INTO idempotency_records (workspace_id, key, request_hash, state, locked_until, created_at, expires_at)
      VALUES (${scope.workspaceId}, ${scope.key}, ${requestHash}, 'in_progress', ${lease}, ${now}, ${expires})
      ON CONFLICT (workspace_id, key) DO NOTHING
      RETURNING key`;
    if (inserted.length === 1) return { kind: 'owner', lease };
    const [row] = await db.$queryRaw<RecordRow[]>`
      SELECT request_hash, state::text AS state, response_status, response_body, locked_until, expires_at
      FROM idempotency_records WHERE workspace_id = ${scope.workspaceId} AND key = ${scope.key}`;
    if (!row) continue; // released between our insert and our read: try again
    if (row.expires_at.getTime() <= now.getTime()) {
      const taken = await db.$queryRaw<unknown[]>`
        UPDATE idempotency_records SET request_hash = ${requestHash}, state = 'in_progress', response_status = NULL,
          response_body = NULL, locked_until = ${lease}, created_at = ${now}, expires_at = ${expires}
        WHERE workspace_id = ${scope.workspaceId} AND key = ${scope.key} AND expires_at = ${row.expires_at}
        RETURNING key`;
      if (taken.length === 1) return { kind: 'owner', lease };
      continue;
    }
    if (row.request_hash !== requestHash) {
      throw new ApiError(
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request in the last 24 hours; use a new key for a new request.',
      );
    }
    if (row.state === 'completed') {
      if (row.response_status === null) throw new Error('a completed idempotency record has no response status');
      return { kind: 'replay', status: row.response_status, body: row.response_body };
    }
    if (row.locked_until.getTime() > now.getTime()) {
      throw inProgress(STILL_HANDLED);
    }
    const taken = await db.$queryRaw<unknown[]>`
      UPDATE idempotency_records SET locked_until = ${lease}
      WHERE workspace_id = ${scope.workspaceId} AND key = ${scope.key} AND state = 'in_progress' AND locked_until = ${row.locked_until}
      RETURNING key`;
    if (taken.length === 1) return { kind: 'owner', lease };
  }
  throw inProgress(STILL_HANDLED);
}

/**
 * Stores the response of the request that holds the key. Called inside the run-creating transaction
 * for a 201, so the runs and their replayable response commit together. Fails (rolling the runs
 * back) when the lease was lost to another request.
 */
async function completeIdempotencyKey(
  tx: DbTx | Db,
  scope: IdempotencyScope,
  lease: Date,
  status: number,
  body: unknown,
): Promise<void> {
  const updated = await tx.$executeRaw`
    UPDATE idempotency_records SET state = 'completed', response_status = ${status}, response_body = ${JSON.stringify(body)}::jsonb
    WHERE workspace_id = ${scope.workspaceId} AND key = ${scope.key} AND state = 'in_progress' AND locked_until = ${lease}`;
  if (updated !== 1) {
    throw inProgress('Another request took over this Idempotency-Key; retry to get its response.');
  }
}

const STILL_HANDLED = 'A request with this Idempotency-Key is still being handled; retry shortly to get its response.';

/** The 409 of a key another request holds; a retry after a second is likely to get its response. */
function inProgress(detail: string): ApiError {
  return new ApiError('idempotency_request_in_progress', detail, { headers: { 'Retry-After': '1' } });
}

/** Frees a key whose request ended in a response that is not kept (400, 5xx …), so a retry can run. */
async function releaseIdempotencyKey(db: Db, scope: IdempotencyScope, lease: Date): Promise<void> {
  await db.$executeRaw`
    DELETE FROM idempotency_records
    WHERE workspace_id = ${scope.workspaceId} AND key = ${scope.key} AND state = 'in_progress' AND locked_until = ${lease}`;
}
