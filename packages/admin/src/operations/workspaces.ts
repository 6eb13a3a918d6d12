import {
  DEFAULT_API_KEY_SCOPES,
  isApiKeyScope,
  withImpliedScopes,
  type ApiKeyScope,
  PLAN_DEFAULTS,
  type Plan,
} from '@testrun/contracts';
import { AdminError } from './admin-error';
import { generateApiKey, KEY_CACHE_TTL_MS, type AuthChangeAnnouncer } from '@testrun/core/api-keys';
import type { Db } from '@testrun/core/db';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { deployProject, DeploymentError, type AppliedProject as CoreAppliedProject } from '@testrun/core/projects';

/**
 * Operator actions behind `testrun admin`: workspaces, members, keys and project files. They talk
 * to Postgres directly; none of them is part of the public API.
 */

export async function createWorkspace(
  db: Db,
  input: { name: string; plan: Plan; maxActiveRuns?: number; monthlyRuns?: number },
) {
  const limits = PLAN_DEFAULTS[input.plan];
  return db.workspace.create({
    data: {
      id: newId(ID_PREFIX.workspace),
      name: input.name,
      plan: input.plan,
      maxActiveRuns: input.maxActiveRuns ?? limits.maxActiveRuns,
      monthlyRuns: input.monthlyRuns ?? limits.monthlyRuns,
    },
  });
}

/**
 * Moves a workspace to a plan; its limits become the plan's unless given. The plan decides whether
 * a paused key is refused, so the API replicas are told (`announce`) once the change is stored.
 */
export async function setWorkspacePlan(
  db: Db,
  workspaceId: string,
  input: { plan: Plan; maxActiveRuns?: number; monthlyRuns?: number },
  announce: AuthChangeAnnouncer,
) {
  await requireWorkspace(db, workspaceId);
  const limits = PLAN_DEFAULTS[input.plan];
  const ws = await db.workspace.update({
    where: { id: workspaceId },
    data: {
      plan: input.plan,
      maxActiveRuns: input.maxActiveRuns ?? limits.maxActiveRuns,
      monthlyRuns: input.monthlyRuns ?? limits.monthlyRuns,
    },
  });
  await announced(announce, `workspace ${workspaceId} is on the ${input.plan} plan`);
  return ws;
}

/**
 * Runs `announce` after a stored change of a key's standing. When the replicas cannot be told, the
 * change still holds (it is in Postgres) and they notice it within {@link KEY_CACHE_TTL_MS}; the
 * operator learns both.
 */
async function announced(announce: AuthChangeAnnouncer, done: string): Promise<void> {
  try {
    await announce();
  } catch (e) {
    throw new AdminError(
      `${done}, but the API could not be told at once (${e instanceof Error ? e.message : String(e)}); it applies the change within ${KEY_CACHE_TTL_MS / 1000} s`,
    );
  }
}

async function requireWorkspace(db: Db, workspaceId: string) {
  const ws = await db.workspace.findUnique({ where: { id: workspaceId } });
  if (!ws) throw new AdminError(`workspace ${workspaceId} does not exist`);
  return ws;
}

function normalizeEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (!/^[^@\s]+@[^@\s]+$/.test(e)) throw new AdminError(`"${email}" is not an email address`);
  return e;
}

export async function addMember(db: Db, workspaceId: string, email: string) {
  await requireWorkspace(db, workspaceId);
  const address = normalizeEmail(email);
  const user = await db.user.upsert({
    where: { email: address },
    create: { id: newId(ID_PREFIX.user), email: address },
    update: {},
  });
  await db.membership.upsert({
    where: { workspaceId_userId: { workspaceId, userId: user.id } },
    create: { workspaceId, userId: user.id },
    update: {},
  });
  return { workspaceId, userId: user.id, email: address };
}

/** Removes a member; the keys they created are refused from then on (the API replicas are told). */
export async function removeMember(db: Db, workspaceId: string, email: string, announce: AuthChangeAnnouncer) {
  await requireWorkspace(db, workspaceId);
  const address = normalizeEmail(email);
  const notMember = new AdminError(`${address} is not a member of workspace ${workspaceId}`);
  const user = await db.user.findUnique({ where: { email: address } });
  if (!user) throw notMember;
  const removed = await db.membership.deleteMany({ where: { workspaceId, userId: user.id } });
  if (removed.count === 0) throw notMember;
  await announced(announce, `${address} is no longer a member of workspace ${workspaceId}`);
  return { workspaceId, userId: user.id, email: address };
}

/**
 * Creates a key with `scopes` (default `run`; each brings the narrower ones it implies); the
 * returned `key` is the only time it exists outside the caller's hands.
 */
export async function createApiKey(
  db: Db,
  input: { workspaceId: string; creatorEmail: string; name: string; scopes?: readonly ApiKeyScope[] },
) {
  await requireWorkspace(db, input.workspaceId);
  const email = normalizeEmail(input.creatorEmail);
  const membership = await db.membership.findFirst({
    where: { workspaceId: input.workspaceId, user: { email } },
    include: { user: true },
  });
  if (!membership) throw new AdminError(`${email} is not a member of workspace ${input.workspaceId}; add them first`);
  const { key, hash, prefix } = generateApiKey();
  const row = await db.apiKey.create({
    data: {
      id: newId(ID_PREFIX.apiKey),
      workspaceId: input.workspaceId,
      creatorId: membership.userId,
      name: input.name,
      hash,
      prefix,
      scopes: withImpliedScopes(input.scopes ?? DEFAULT_API_KEY_SCOPES),
    },
  });
  return { id: row.id, key, prefix, workspaceId: row.workspaceId, name: row.name, scopes: keyScopes(row.scopes) };
}

/** A key's stored scopes, typed (the CHECK of api_keys holds them to API_KEY_SCOPES). */
export function keyScopes(stored: readonly string[]): ApiKeyScope[] {
  return stored.filter(isApiKeyScope);
}

/**
 * Gives a key exactly `scopes` (each with the narrower ones it implies); the API replicas are told
 * once the change is stored, so a narrower key is refused what it lost on the very next request.
 */
export async function setApiKeyScopes(
  db: Db,
  keyId: string,
  scopes: readonly ApiKeyScope[],
  announce: AuthChangeAnnouncer,
) {
  const existing = await db.apiKey.findUnique({ where: { id: keyId }, select: { revokedAt: true } });
  if (!existing) throw new AdminError(`key ${keyId} does not exist`);
  if (existing.revokedAt) throw new AdminError(`key ${keyId} is revoked`);
  const row = await db.apiKey.update({ where: { id: keyId }, data: { scopes: withImpliedScopes(scopes) } });
  const given = keyScopes(row.scopes);
  await announced(announce, `key ${keyId} has the scopes ${given.join(', ')}`);
  return { id: row.id, workspaceId: row.workspaceId, scopes: given };
}

export type KeyAction = 'pause' | 'resume' | 'revoke';

/** Pauses, resumes or revokes a key; the API replicas are told once the change is stored. */
export async function changeApiKey(db: Db, keyId: string, action: KeyAction, announce: AuthChangeAnnouncer) {
  const existing = await db.apiKey.findUnique({ where: { id: keyId } });
  if (!existing) throw new AdminError(`key ${keyId} does not exist`);
  if (existing.revokedAt && action !== 'revoke') throw new AdminError(`key ${keyId} is revoked`);
  const data =
    action === 'pause'
      ? { paused: true }
      : action === 'resume'
        ? { paused: false }
        : { revokedAt: existing.revokedAt ?? new Date() };
  const row = await db.apiKey.update({ where: { id: keyId }, data });
  await announced(
    announce,
    `key ${keyId} is ${action === 'pause' ? 'paused' : action === 'resume' ? 'resumed' : 'revoked'}`,
  );
  return { id: row.id, paused: row.paused, revoked: row.revokedAt !== null };
}

export type AppliedProject = CoreAppliedProject & {
  /** The deployment the file was stored as (activated), and its version. */
  deploymentId: string;
  version: number;
};

/**
 * Applies a project file: deploys it as the project's next version, activated at once (the same
 * code as POST /api/v1/projects/{projectSlug}/deployments): upserts the project by slug, its suites
 * by slug and their tests by key, in one transaction. Suites and tests no longer in the file are
 * archived (their runs are kept). A file identical to the active version's stores no new version.
 * A file that does not validate changes nothing and lists every problem.
 */
export async function applyProject(
  db: Db,
  workspaceId: string,
  input: unknown,
  /** `webhookKey` seals the secrets of webhook endpoints the file adds (`deriveKeys(secret).headers`). */
  options: { webhookKey?: Buffer } = {},
): Promise<AppliedProject> {
  await requireWorkspace(db, workspaceId);
  try {
    const { deployment, applied } = await deployProject(db, {
      workspaceId,
      document: input,
      activate: true,
      keyId: null,
      webhookKey: options.webhookKey,
      unlessUnchanged: true,
    });
    if (!applied) throw new Error('an activated deployment applies its file');
    return { ...applied, deploymentId: deployment.id, version: deployment.version };
  } catch (e) {
    if (e instanceof DeploymentError) throw new AdminError(e.message, e.errors);
    throw e;
  }
}
