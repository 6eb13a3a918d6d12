import type { Db } from '@testrun/core/db';
import type { RunOutcome } from '@testrun/core/runs';
import { loadStoredSecrets, openHeaders, openRunVariables } from '@testrun/core/secrets';
import type { Retrying } from '../../run/claim';
import { headersUnreadableOutcome } from '../../run/run-outcomes';
import { storedSecretsUnreadableOutcome } from '../../run/run-secrets';
import { SecretMask } from '../../run/secret-mask';
import type { RunRecord } from '../executor';

/** What a Playwright run holds in clear: the target's headers, the test's environment, and the mask. */
export type PlaywrightSecrets = {
  headers: Record<string, string>;
  /** Variables and secret variables as environment variables of the same name. */
  env: Record<string, string>;
  mask: SecretMask;
};

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Opens the run's headers and request variables, and every stored secret of its project and
 * workspace (a Playwright test may read any `process.env`: which it reads cannot be known before it
 * runs). Request values win over the project's, the project's over the workspace's; secrets over
 * variables of the same name. Every secret value and header value is in the mask.
 */
export async function openPlaywrightSecrets(
  db: Db,
  key: Buffer,
  run: RunRecord,
  retry: Retrying,
): Promise<{ secrets: PlaywrightSecrets } | { outcome: RunOutcome }> {
  let headers: Record<string, string> = {};
  let vars: Record<string, string> = {};
  let secrets: Record<string, string> = {};
  try {
    if (run.headersSealed) headers = openHeaders(key, run.id, run.headersSealed);
    if (run.variablesSealed) ({ vars, secrets } = openRunVariables(key, run.id, run.variablesSealed));
  } catch {
    return { outcome: headersUnreadableOutcome() };
  }
  try {
    const stored = await loadStoredSecrets(db, key, run.workspaceId, run.projectId, retry);
    secrets = { ...stored, ...secrets };
  } catch {
    return { outcome: storedSecretsUnreadableOutcome() };
  }
  const env = Object.fromEntries(
    Object.entries({ ...vars, ...secrets }).filter(([name]) => ENV_NAME.test(name) && !name.startsWith('TESTRUN_')),
  );
  return {
    secrets: { headers, env, mask: new SecretMask([...Object.values(headers), ...Object.values(secrets)]) },
  };
}
