import type { Db } from '../db';
import { openText, parseStringMap, sealText } from './seal';

/** A run's own variables from its request: plain (`{{vars.NAME}}`) and secret (`{{secrets.NAME}}`). */
export type RunVariables = { vars: Record<string, string>; secrets: Record<string, string> };

/** Associated data of a run's sealed variables: distinct from its headers', so one never opens as the other. */
function runVariablesAad(runId: string): string {
  return `run-variables:${runId}`;
}

/** Seals a run's request variables under the run-secrets key (`deriveKeys(secret).headers`), bound to the run. */
export function sealRunVariables(key: Buffer, runId: string, variables: RunVariables): Buffer {
  return sealText(key, runVariablesAad(runId), JSON.stringify(variables));
}

export function openRunVariables(key: Buffer, runId: string, sealed: Uint8Array): RunVariables {
  const parsed: unknown = JSON.parse(openText(key, runVariablesAad(runId), sealed));
  if (parsed === null || typeof parsed !== 'object' || !('vars' in parsed) || !('secrets' in parsed))
    throw new Error('not sealed run variables');
  return { vars: parseStringMap(JSON.stringify(parsed.vars)), secrets: parseStringMap(JSON.stringify(parsed.secrets)) };
}

/** What a stored secret variable's value is bound to. */
export type SecretVariableOwner = { workspaceId: string; projectId: string | null; name: string };

/** Associated data of a stored secret: its workspace, project and name, so a sealed value moved to another row does not open. */
function storedSecretAad(owner: SecretVariableOwner): string {
  return `secret-variable:${owner.workspaceId}:${owner.projectId ?? '*'}:${owner.name}`;
}

export function sealSecretVariable(key: Buffer, owner: SecretVariableOwner, value: string): Buffer {
  return sealText(key, storedSecretAad(owner), value);
}

export function openSecretVariable(key: Buffer, owner: SecretVariableOwner, sealed: Uint8Array): string {
  return openText(key, storedSecretAad(owner), sealed);
}

/**
 * The stored secrets a run of `projectId` can use: the workspace's, overridden by the project's of
 * the same name. Throws when one does not open (another TESTRUN_SECRET). `read` runs the query (a
 * worker's retries through a Postgres outage); by default it runs it once.
 */
export async function loadStoredSecrets(
  db: Db,
  key: Buffer,
  workspaceId: string,
  projectId: string,
  read: <T>(query: () => Promise<T>) => Promise<T> = (query) => query(),
): Promise<Record<string, string>> {
  const rows = await read(() =>
    db.secretVariable.findMany({
      where: { workspaceId, OR: [{ projectId: null }, { projectId }] },
      select: { projectId: true, name: true, valueSealed: true },
    }),
  );
  const out: Record<string, string> = {};
  // Workspace values first, so the project's of the same name replace them.
  const ordered = [...rows].sort((a, b) => Number(a.projectId !== null) - Number(b.projectId !== null));
  for (const row of ordered)
    out[row.name] = openSecretVariable(key, { workspaceId, projectId: row.projectId, name: row.name }, row.valueSealed);
  return out;
}
