import { isSecretName, SECRET_NAME_RULE } from '@testrun/contracts';
import { AdminError } from './admin-error';
import type { Db } from '@testrun/core/db';
import {
  findSecretHome,
  listSecrets,
  removeSecret,
  secretValueProblem,
  storeSecret,
  type SecretHome,
} from '@testrun/core/secrets';

// The admin CLI's view of the stored secret variables: the data access is core's
// (@testrun/core/secrets, stored.ts), shared with the API; here are the operator's messages.

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

async function resolveScope(db: Db, scope: SecretScope): Promise<SecretHome> {
  const found = await findSecretHome(db, scope.workspaceId, scope.projectSlug || null);
  if ('home' in found) return found.home;
  if (found.missing === 'workspace') throw new AdminError(`workspace ${scope.workspaceId} does not exist`);
  throw new AdminError(`project ${scope.projectSlug ?? ''} does not exist in workspace ${scope.workspaceId}`);
}

function checkName(name: string): void {
  if (!isSecretName(name)) throw new AdminError(`${name} is not a variable name (${SECRET_NAME_RULE})`);
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
  const problem = secretValueProblem(value);
  if (problem) throw new AdminError(problem);
  const { created } = await storeSecret(db, key, await resolveScope(db, scope), name, value);
  return { created };
}

/** Names and dates of a workspace's secrets (and its projects'), or of one project's; never their values. */
export async function listSecretVariables(db: Db, scope: SecretScope): Promise<SecretListing[]> {
  const home = await resolveScope(db, scope);
  const secrets = await listSecrets(db, scope.projectSlug ? home : { workspaceId: home.workspaceId });
  return secrets.map((s) => ({ ...s, createdAt: s.createdAt.toISOString(), updatedAt: s.updatedAt.toISOString() }));
}

export async function deleteSecretVariable(db: Db, scope: SecretScope, name: string): Promise<void> {
  checkName(name);
  if (!(await removeSecret(db, await resolveScope(db, scope), name)))
    throw new AdminError(`secret ${name} does not exist there`);
}
