import { hmacHex, type Db, type DbTx } from '@testrun/core';
import { ApiError } from '../errors';

/** How long a key is remembered, from the first request that used it. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long the first request holds a key before another may take it over (its holder crashed).
 * Longer than the longest run-creating transaction (20 s plus 5 s waiting for a connection).
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;
/** Statuses whose response is kept and replayed; any other releases the key. */
export const KEPT_STATUSES = new Set([201, 404, 422]);

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Checks the Idempotency-Key header: 1–255 visible ASCII characters. */
export function readIdempotencyKey(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!KEY_PATTERN.test(value)) {
    throw new ApiError(
      'invalid_body',
      'The Idempotency-Key header must be 1 to 255 visible ASCII characters (no spaces).',
      {
        errors: [{ path: 'header:Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }],
      },
    );
  }
  return value;
}

/** JSON with object keys sorted at every level, so equal requests hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
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

export type IdempotencyScope = { workspaceId: string; key: string };
export type IdempotencyClaim = { kind: 'owner'; lease: Date } | { kind: 'replay'; status: number; body: unknown };

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
export async function claimIdempotencyKey(
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
    if (row.state === 'completed') return { kind: 'replay', status: row.response_status!, body: row.response_body };
    if (row.locked_until.getTime() > now.getTime()) {
      throw new ApiError(
        'idempotency_request_in_progress',
        'A request with this Idempotency-Key is still being handled; retry shortly to get its response.',
        {
          headers: { 'Retry-After': '1' },
        },
      );
    }
    const taken = await db.$queryRaw<unknown[]>`
      UPDATE idempotency_records SET locked_until = ${lease}
      WHERE workspace_id = ${scope.workspaceId} AND key = ${scope.key} AND state = 'in_progress' AND locked_until = ${row.locked_until}
      RETURNING key`;
    if (taken.length === 1) return { kind: 'owner', lease };
  }
  throw new ApiError(
    'idempotency_request_in_progress',
    'A request with this Idempotency-Key is still being handled; retry shortly to get its response.',
    {
      headers: { 'Retry-After': '1' },
    },
  );
}

/**
 * Stores the response of the request that holds the key. Called inside the run-creating transaction
 * for a 201, so the runs and their replayable response commit together. Fails (rolling the runs
 * back) when the lease was lost to another request.
 */
export async function completeIdempotencyKey(
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
    throw new ApiError(
      'idempotency_request_in_progress',
      'Another request took over this Idempotency-Key; retry to get its response.',
      {
        headers: { 'Retry-After': '1' },
      },
    );
  }
}

/** Frees a key whose request ended in a response that is not kept (400, 5xx …), so a retry can run. */
export async function releaseIdempotencyKey(db: Db, scope: IdempotencyScope, lease: Date): Promise<void> {
  await db.$executeRaw`
    DELETE FROM idempotency_records
    WHERE workspace_id = ${scope.workspaceId} AND key = ${scope.key} AND state = 'in_progress' AND locked_until = ${lease}`;
}
