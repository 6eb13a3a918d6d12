import { isWellFormedApiKey } from '@testrun/core/api-keys';
import { readSql, type Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import { isApiKeyScope, type ApiKeyScope, type Plan } from '@testrun/contracts';
import { ApiError, errorMessage } from '../errors';

/**
 * Who is calling and what the key may do: set on res.locals.auth once the key is accepted. Cached
 * with the key, so a change of scopes is announced like a revocation (the authentication epoch).
 */
export type AuthContext = { keyId: string; workspaceId: string; scopes: readonly ApiKeyScope[] };

type KeyRow = {
  id: string;
  workspace_id: string;
  scopes: string[];
  paused: boolean;
  revoked_at: Date | null;
  last_used_at: Date | null;
  plan: Plan;
  creator_is_member: boolean;
};

/** last_used_at is refreshed at most this often per key, so a busy key costs no write per request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Same answer for every 401 so that a caller learns nothing about which keys exist. */
function unauthorized(detail: string): ApiError {
  return new ApiError('unauthorized', detail);
}

/** Extracts the key from `Authorization: Bearer <key>`, or throws the 401 that says what is wrong. */
export function readBearerKey(header: string | undefined): string {
  if (!header) throw unauthorized('The Authorization header is missing; send "Authorization: Bearer <API key>".');
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match)
    throw unauthorized('The Authorization header must use the Bearer scheme: "Authorization: Bearer <API key>".');
  const [, key = ''] = match;
  // Shape and checksum first: a mistyped or made-up key never reaches the database.
  if (!isWellFormedApiKey(key)) throw unauthorized('The API key is malformed.');
  return key;
}

/** An accepted key: who calls, and when the key was last recorded as used. */
export type AcceptedKey = { auth: AuthContext; lastUsedAt: Date | null };

/** A key's row with what accepting it needs, by its hash or by its id. */
function keySql(by: 'hash' | 'id'): string {
  return `SELECT k.id, k.workspace_id, k.scopes, k.paused, k.revoked_at, k.last_used_at, w.plan::text AS plan,
      EXISTS (SELECT 1 FROM memberships m WHERE m.workspace_id = k.workspace_id AND m.user_id = k.creator_id) AS creator_is_member
    FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
    WHERE k.${by} = $1`;
}

/**
 * Resolves a key (by its hash) to its workspace, or throws 401 (unknown, revoked) or 403 (paused on
 * the Free plan, creator no longer a member). One indexed lookup by hash.
 */
export async function readKey(db: Db, hash: string): Promise<AcceptedKey> {
  const rows = await readSql<KeyRow>(db, 'api_key_by_hash', keySql('hash'), [hash]);
  return acceptKey(rows[0]);
}

/**
 * The key an approval link was issued to (docs/VISUAL.md), by its id, accepted by the same rules
 * as a key sent in a request: the link approves only while the key itself could.
 */
export async function readKeyById(db: Db, id: string): Promise<AcceptedKey> {
  const rows = await readSql<KeyRow>(db, 'api_key_by_id', keySql('id'), [id]);
  return acceptKey(rows[0]);
}

function acceptKey(row: KeyRow | undefined): AcceptedKey {
  if (!row) throw unauthorized('The API key is not valid.');
  // Revoked reads exactly like unknown: the answer must not tell a guesser that a key once existed.
  if (row.revoked_at) throw unauthorized('The API key is not valid.');
  // A paused key is refused only while its workspace is on the Free plan (the contract's rule).
  if (row.paused && row.plan === 'free') {
    throw new ApiError(
      'key_paused',
      'This API key is paused and the workspace is on the Free plan; resume the key or upgrade the plan.',
    );
  }
  if (!row.creator_is_member) {
    throw new ApiError(
      'key_creator_not_member',
      'The person who created this API key is no longer a member of its workspace; create a new key.',
    );
  }
  // The CHECK of api_keys holds scopes to the known names; an unknown one is never granted.
  const scopes = row.scopes.filter(isApiKeyScope);
  return { auth: { keyId: row.id, workspaceId: row.workspace_id, scopes }, lastUsedAt: row.last_used_at };
}

/** Whether last_used_at is due to be written again (it is refreshed at most once a minute per key). */
export function keyUseDue(lastUsedAt: number | null, now: Date): boolean {
  return lastUsedAt === null || now.getTime() - lastUsedAt >= LAST_USED_RESOLUTION_MS;
}

/** Records that the key was used; best effort, never delays or fails the request. */
export function touchKey(db: Db, logger: Logger, keyId: string): void {
  db.$executeRaw`
    UPDATE api_keys SET last_used_at = now()
    WHERE id = ${keyId} AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`.catch((e: unknown) =>
    logger.warn('could not record key use', { keyId, error: errorMessage(e) }),
  );
}
