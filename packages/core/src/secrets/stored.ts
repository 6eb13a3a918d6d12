import { VARIABLE_LIMITS } from '@testrun/contracts';
import type { Db } from '../db';
import { ID_PREFIX, newId } from '../ids';
import { sealSecretVariable } from './variables';

/**
 * The stored secret variables (`secret_variables`) as the admin CLI and the API manage them: set
 * (sealed), list (names and dates), delete. Where one lives is resolved by the caller, who says
 * what a missing workspace or project means to it; no function here returns or logs a value.
 */

/** Where a secret lives: a workspace (project null) or one project of it. */
export type SecretHome = { workspaceId: string; projectId: string | null };

/** A stored secret without its value. */
export type StoredSecret = {
  name: string;
  workspaceId: string;
  projectSlug: string | null;
  createdAt: Date;
  updatedAt: Date;
};

const LISTED = {
  name: true,
  workspaceId: true,
  createdAt: true,
  updatedAt: true,
  project: { select: { slug: true } },
} as const;

type ListedRow = {
  name: string;
  workspaceId: string;
  createdAt: Date;
  updatedAt: Date;
  project: { slug: string } | null;
};

function stored(row: ListedRow): StoredSecret {
  const { name, workspaceId, createdAt, updatedAt } = row;
  return { name, workspaceId, projectSlug: row.project?.slug ?? null, createdAt, updatedAt };
}

/**
 * Why `value` cannot be stored (empty, too long, a NUL), or null when it can. Characters are code
 * points, as the API's schema (ajv's `maxLength`) counts them, so the admin CLI and the API accept
 * the same values.
 */
export function secretValueProblem(value: string): string | null {
  if (value.length === 0) return 'the value is empty';
  if (Array.from(value).length > VARIABLE_LIMITS.maxValueLength || value.includes('\0'))
    return `the value must be at most ${VARIABLE_LIMITS.maxValueLength} characters, without NUL`;
  return null;
}

/**
 * The home of a workspace's secrets, or of one of its projects' (by slug); null when the workspace
 * or the project does not exist (a project of another workspace does not exist here).
 */
export async function findSecretHome(
  db: Db,
  workspaceId: string,
  projectSlug: string | null,
): Promise<{ home: SecretHome } | { missing: 'workspace' | 'project' }> {
  if (projectSlug === null) {
    const ws = await db.workspace.findUnique({ where: { id: workspaceId }, select: { id: true } });
    return ws ? { home: { workspaceId, projectId: null } } : { missing: 'workspace' };
  }
  const project = await db.project.findUnique({
    where: { workspaceId_slug: { workspaceId, slug: projectSlug } },
    select: { id: true },
  });
  if (project) return { home: { workspaceId, projectId: project.id } };
  const ws = await db.workspace.findUnique({ where: { id: workspaceId }, select: { id: true } });
  return { missing: ws ? 'project' : 'workspace' };
}

/**
 * Stores (or replaces) a secret's value, sealed under `key` (`deriveKeys(secret).headers`) and bound
 * to its workspace, project and name. The caller has checked the name and the value.
 */
export async function storeSecret(
  db: Db,
  key: Buffer,
  home: SecretHome,
  name: string,
  value: string,
): Promise<{ created: boolean; secret: StoredSecret }> {
  const valueSealed = new Uint8Array(sealSecretVariable(key, { ...home, name }, value));
  // A workspace-level row has a null project, which the unique index does not compare: look it up first.
  return db.$transaction(async (tx) => {
    const existing = await tx.secretVariable.findFirst({ where: { ...home, name }, select: { id: true } });
    if (existing) {
      const row = await tx.secretVariable.update({ where: { id: existing.id }, data: { valueSealed }, select: LISTED });
      return { created: false, secret: stored(row) };
    }
    const row = await tx.secretVariable.create({
      data: { id: newId(ID_PREFIX.secretVariable), ...home, name, valueSealed },
      select: LISTED,
    });
    return { created: true, secret: stored(row) };
  });
}

/**
 * Names and dates of secrets, never values: of one home (`home`), or of a workspace and all its
 * projects (`{ workspaceId }` alone), by project (the workspace's last) and name.
 */
export async function listSecrets(db: Db, where: SecretHome | { workspaceId: string }): Promise<StoredSecret[]> {
  const rows = await db.secretVariable.findMany({
    where,
    select: LISTED,
    orderBy: [{ projectId: 'asc' }, { name: 'asc' }],
  });
  return rows.map(stored);
}

/** Deletes a secret; false when there was none of that name there. */
export async function removeSecret(db: Db, home: SecretHome, name: string): Promise<boolean> {
  const { count } = await db.secretVariable.deleteMany({ where: { ...home, name } });
  return count > 0;
}
