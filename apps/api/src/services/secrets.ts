import { isSecretName, SECRET_NAME_RULE, type Secret, type SecretList } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import {
  findSecretHome,
  listSecrets,
  removeSecret,
  storeSecret,
  type SecretHome,
  type StoredSecret,
} from '@testrun/core/secrets';
import { ApiError } from '../errors';

/**
 * The secrets of the key's workspace (project null) and of its projects, over the API: the same
 * stored, sealed secrets the admin CLI manages (@testrun/core/secrets). No answer, log line or
 * error here carries a value.
 */

/** Where the request's secrets live; another workspace's project is 404 exactly like a missing one. */
async function homeOf(db: Db, workspaceId: string, projectSlug: string | null): Promise<SecretHome> {
  const found = await findSecretHome(db, workspaceId, projectSlug);
  if ('home' in found) return found.home;
  throw new ApiError('not_found', `There is no project ${JSON.stringify(projectSlug)} in this workspace.`);
}

/** 400 for a name no step could reference; checked before anything is looked up. */
function checkName(name: string): void {
  if (!isSecretName(name))
    throw new ApiError('invalid_secret_name', `The secret name must be a variable name (${SECRET_NAME_RULE}).`);
}

function toSecret(s: StoredSecret): Secret {
  return {
    name: s.name,
    project_slug: s.projectSlug,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

export async function listSecretsOf(db: Db, workspaceId: string, projectSlug: string | null): Promise<SecretList> {
  const home = await homeOf(db, workspaceId, projectSlug);
  return { secrets: (await listSecrets(db, home)).map(toSecret) };
}

/** Sets a secret (created or replaced), sealed under `key` (`deriveKeys(secret).headers`). */
export async function setSecret(
  db: Db,
  key: Buffer,
  target: { workspaceId: string; projectSlug: string | null; name: string },
  value: string,
): Promise<{ created: boolean; secret: Secret }> {
  checkName(target.name);
  const home = await homeOf(db, target.workspaceId, target.projectSlug);
  const { created, secret } = await storeSecret(db, key, home, target.name, value);
  return { created, secret: toSecret(secret) };
}

export async function deleteSecret(
  db: Db,
  target: { workspaceId: string; projectSlug: string | null; name: string },
): Promise<void> {
  checkName(target.name);
  const home = await homeOf(db, target.workspaceId, target.projectSlug);
  if (!(await removeSecret(db, home, target.name)))
    throw new ApiError('not_found', `There is no secret ${target.name} here.`);
}
