import type { Step } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import type { RunOutcome } from '@testrun/core/runs';
import { loadStoredSecrets, openHeaders, openRunVariables } from '@testrun/core/secrets';
import { headersUnreadableOutcome, invalidDefinitionOutcome } from './run-outcomes';
import { SecretMask } from './secret-mask';
import type { StepOutcomeResult } from './step-outcome';
import { findUnknownVariable, referencedNames, type VariableValues } from './variables';

/** What a run holds in clear while it executes: its headers, its variables and the mask of every secret it uses. */
export type RunSecrets = {
  headers: Record<string, string>;
  values: VariableValues;
  mask: SecretMask;
};

/** The sealed parts of a claimed run. */
type SealedRun = {
  id: string;
  workspaceId: string;
  projectId: string;
  headersSealed: Uint8Array | null;
  variablesSealed: Uint8Array | null;
};

/**
 * Opens the run's headers and request variables, reads the stored secrets its steps reference
 * (request values win over the project's, the project's over the workspace's) and checks that every
 * `{{vars.NAME}}` and `{{secrets.NAME}}` resolves. An unknown name ends the run
 * `error`/`invalid_definition` naming the variable; a value that does not open ends it `internal_error`.
 */
export async function openRunSecrets(
  db: Db,
  key: Buffer,
  run: SealedRun,
  steps: readonly Step[],
  read: <T>(query: () => Promise<T>) => Promise<T> = (query) => query(),
): Promise<{ secrets: RunSecrets } | { outcome: RunOutcome }> {
  let headers: Record<string, string> = {};
  let values: VariableValues = { vars: {}, secrets: {} };
  try {
    if (run.headersSealed) headers = openHeaders(key, run.id, run.headersSealed);
    if (run.variablesSealed) values = openRunVariables(key, run.id, run.variablesSealed);
  } catch {
    return { outcome: headersUnreadableOutcome() };
  }
  const used = referencedNames(steps);
  const missing = [...used.secrets].some((name) => !Object.hasOwn(values.secrets, name));
  if (missing) {
    try {
      const stored = await loadStoredSecrets(db, key, run.workspaceId, run.projectId, read);
      values = { vars: values.vars, secrets: { ...stored, ...values.secrets } };
    } catch {
      return { outcome: storedSecretsUnreadableOutcome() };
    }
  }
  const unknown = findUnknownVariable(steps, values);
  if (unknown) {
    const [kind] = unknown.reference.split('.');
    const where = kind === 'secrets' ? 'the request, the project or the workspace' : "the request's variables";
    return {
      outcome: invalidDefinitionOutcome(`step ${unknown.step}: {{${unknown.reference}}} is not defined in ${where}`),
    };
  }
  const usedSecrets = [...used.secrets].flatMap((name) => {
    const value = values.secrets[name];
    return value === undefined ? [] : [value];
  });
  // Only what the run uses reaches its memory past this point and its mask.
  const secrets = Object.fromEntries(Object.entries(values.secrets).filter(([name]) => used.secrets.has(name)));
  return {
    secrets: {
      headers,
      values: { vars: values.vars, secrets },
      mask: new SecretMask([...Object.values(headers), ...usedSecrets]),
    },
  };
}

/** A stored secret that does not open: sealed under another TESTRUN_SECRET, or not for this workspace/project. */
export function storedSecretsUnreadableOutcome(): RunOutcome {
  return {
    status: 'error',
    code: 'internal_error',
    message:
      "a stored secret variable of the run's workspace or project could not be decrypted (was it set with another TESTRUN_SECRET?)",
    resultSummary: 'Error: a stored secret variable could not be decrypted.',
  };
}

/** A step's result with every secret value masked in what is stored: its target and its messages. */
export function maskStepResult(mask: SecretMask, result: StepOutcomeResult): StepOutcomeResult {
  if (mask.isEmpty) return result;
  const target = mask.text(result.target);
  if (result.outcome === 'passed') return { ...result, target };
  const masked = { ...result, target, message: mask.text(result.message), reason: mask.text(result.reason) };
  if (masked.outcome !== 'failed' || !masked.comparison) return masked;
  const { comparison } = masked;
  return {
    ...masked,
    comparison: { ...comparison, expected: mask.text(comparison.expected), received: mask.text(comparison.received) },
  };
}

/** A run's outcome with every secret value masked in its summary and message. */
export function maskOutcome(mask: SecretMask, outcome: RunOutcome): RunOutcome {
  if (mask.isEmpty) return outcome;
  return {
    ...outcome,
    resultSummary: mask.text(outcome.resultSummary),
    ...(outcome.message ? { message: mask.text(outcome.message) } : {}),
  };
}
