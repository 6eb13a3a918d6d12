import type { Db } from '@testrun/core/db';
import type { RunOutcome } from '@testrun/core/runs';
import { loadStoredSecrets, openHeaders, openRunVariables } from '@testrun/core/secrets';
import type { Retrying } from '../../run/claim';
import { headersUnreadableOutcome } from '../../run/run-outcomes';
import { storedSecretsUnreadableOutcome } from '../../run/run-secrets';
import { SecretMask } from '../../run/secret-mask';
import type { RunRecord } from '../../run/executor';

/** What a Playwright run holds in clear: the target's headers, the test's environment, and the mask. */
export type PlaywrightSecrets = {
  headers: Record<string, string>;
  /** Variables and secret variables as environment variables of the same name. */
  env: Record<string, string>;
  mask: SecretMask;
};

/** The values the run's request sealed into it: its headers, variables and secret variables. */
export type RequestValues = {
  headers: Record<string, string>;
  vars: Record<string, string>;
  secrets: Record<string, string>;
};

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Opens the run's headers and request variables (no read: they are sealed in the run's row). */
export function openRequestValues(key: Buffer, run: RunRecord): { values: RequestValues } | { outcome: RunOutcome } {
  try {
    const headers = run.headersSealed ? openHeaders(key, run.id, run.headersSealed) : {};
    const { vars, secrets } = run.variablesSealed
      ? openRunVariables(key, run.id, run.variablesSealed)
      : { vars: {}, secrets: {} };
    return { values: { headers, vars, secrets } };
  } catch {
    return { outcome: headersUnreadableOutcome() };
  }
}

/**
 * The run's request values with `stored`, the stored secrets of its project and workspace (a
 * Playwright test may read any `process.env`: which it reads cannot be known before it runs).
 * Request values win over stored ones; secrets over variables of the same name. Every secret value
 * and header value is in the mask.
 */
export function playwrightSecrets(values: RequestValues, stored: Record<string, string> = {}): PlaywrightSecrets {
  const secrets = { ...stored, ...values.secrets };
  const env = Object.fromEntries(
    Object.entries({ ...values.vars, ...secrets }).filter(
      ([name]) => ENV_NAME.test(name) && !name.startsWith('TESTRUN_'),
    ),
  );
  const mask = new SecretMask([...Object.values(values.headers), ...Object.values(secrets)]);
  return { headers: values.headers, env, mask };
}

/** {@link playwrightSecrets} with the stored secrets of the run's project and workspace, read now. */
export async function withStoredSecrets(
  read: { db: Db; key: Buffer; retry: Retrying },
  run: RunRecord,
  values: RequestValues,
): Promise<{ secrets: PlaywrightSecrets } | { outcome: RunOutcome }> {
  try {
    const stored = await loadStoredSecrets(read.db, read.key, run.workspaceId, run.projectId, read.retry);
    return { secrets: playwrightSecrets(values, stored) };
  } catch {
    return { outcome: storedSecretsUnreadableOutcome() };
  }
}
