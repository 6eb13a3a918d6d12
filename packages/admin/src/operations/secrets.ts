import { isVariableName, VARIABLE_LIMITS } from '@testrun/contracts';
import { AdminError } from './admin-error';
import type { Db } from '@testrun/core/db';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { sealSecretVariable } from '@testrun/core/secrets';

/** Where a secret variable lives: a workspace, or one project of it (by slug). */
export type SecretScope = { workspaceId: string; projectSlug?: string | null };

/** A stored secret as the admin commands show it: never its value. */
export type SecretListing = {
  name: string;
  workspaceId: string;
  projectSlug: string | null;
  createdAt: string;
  updatedAt: string;
};

async function resolveScope(db: Db, scope: SecretScope): Promise<{ workspaceId: string; projectId: string | null }> {
  const ws = await db.workspace.findUnique({ where: { id: scope.workspaceId }, select: { id: true } });
  if (!ws) throw new AdminError(`workspace ${scope.workspaceId} does not exist`);
  if (!scope.projectSlug) return { workspaceId: ws.id, projectId: null };
  const project = await db.project.findUnique({
    where: { workspaceId_slug: { workspaceId: ws.id, slug: scope.projectSlug } },
    select: { id: true },
  });
  if (!project) throw new AdminError(`project ${scope.projectSlug} does not exist in workspace ${ws.id}`);
  return { workspaceId: ws.id, projectId: project.id };
}

function checkName(name: string): void {
  if (!isVariableName(name))
    throw new AdminError(`${name} is not a variable name (a letter or _, then letters, digits and _; at most 64)`);
}

/**
 * Stores (or replaces) a secret variable's value, sealed under `key` (`deriveKeys(secret).headers`)
 * and bound to its workspace, project and name. The value is never returned.
 */
export async function setSecretVariable(
  db: Db,
  key: Buffer,
  scope: SecretScope,
  name: string,
  value: string,
): Promise<{ created: boolean }> {
  checkName(name);
  if (value.length === 0) throw new AdminError('the value is empty');
  if (value.length > VARIABLE_LIMITS.maxValueLength || value.includes('\0'))
    throw new AdminError(`the value must be at most ${VARIABLE_LIMITS.maxValueLength} characters, without NUL`);
  const owner = await resolveScope(db, scope);
  const valueSealed = new Uint8Array(sealSecretVariable(key, { ...owner, name }, value));
  // A workspace-level row has a null project, which the unique index does not compare: look it up first.
  return db.$transaction(async (tx) => {
    const existing = await tx.secretVariable.findFirst({ where: { ...owner, name }, select: { id: true } });
    if (existing) {
      await tx.secretVariable.update({ where: { id: existing.id }, data: { valueSealed } });
      return { created: false };
    }
    await tx.secretVariable.create({ data: { id: newId(ID_PREFIX.secretVariable), ...owner, name, valueSealed } });
    return { created: true };
  });
}

/** Names and dates of a workspace's secrets (and its projects'), never their values. */
export async function listSecretVariables(db: Db, scope: SecretScope): Promise<SecretListing[]> {
  const owner = await resolveScope(db, scope);
  const rows = await db.secretVariable.findMany({
    where: scope.projectSlug ? owner : { workspaceId: owner.workspaceId },
    select: { name: true, workspaceId: true, createdAt: true, updatedAt: true, project: { select: { slug: true } } },
    orderBy: [{ projectId: 'asc' }, { name: 'asc' }],
  });
  return rows.map((r) => ({
    name: r.name,
    workspaceId: r.workspaceId,
    projectSlug: r.project?.slug ?? null,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  }));
}

export async function deleteSecretVariable(db: Db, scope: SecretScope, name: string): Promise<void> {
  checkName(name);
  const owner = await resolveScope(db, scope);
  const { count } = await db.secretVariable.deleteMany({ where: { ...owner, name } });
  if (count === 0) throw new AdminError(`secret ${name} does not exist there`);
}
