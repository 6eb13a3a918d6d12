// The sealed copy of a suite-mode request's headers and variables that a suite run keeps for reruns.
import { openHeaders, sealHeaders } from '../secrets/seal';
import { openRunVariables, sealRunVariables, type RunVariables } from '../secrets/variables';

/**
 * How long a suite run keeps its sealed copy after it was created. The runs' own copies are erased
 * as each run ends; this one lets a rerun send the same headers and variables within a working day,
 * and is then erased by the reconciler (a rerun after that must be given them again).
 */
export const SEALED_COPY_TTL_MS = 24 * 60 * 60 * 1000;

/** The request fields a sealed copy can hold, as `suite_runs.sealed_fields` names them. */
export type SealedField = 'headers' | 'variables' | 'secretVariables';

/** What a suite run's copy holds, opened. */
export type SuiteRunCopy = { headers: Record<string, string> | null; variables: RunVariables | null };

/** The columns of a sealed copy. */
export type SealedCopyColumns = {
  headersSealed: Buffer | null;
  variablesSealed: Buffer | null;
  /** Comma-separated {@link SealedField}s; null when the request gave none. */
  sealedFields: string | null;
};

/** The owner bound into a suite run's sealed copy: distinct from any run id, so neither opens as the other. */
function copyOwner(suiteRunId: string): string {
  return `suite-run-copy:${suiteRunId}`;
}

/** Seals a request's headers and variables for the suite run `suiteRunId`. */
export function sealSuiteRunCopy(
  key: Buffer,
  suiteRunId: string,
  headers: Record<string, string> | null | undefined,
  variables: RunVariables | null | undefined,
): SealedCopyColumns {
  const fields: SealedField[] = [];
  if (headers && Object.keys(headers).length > 0) fields.push('headers');
  if (variables && Object.keys(variables.vars).length > 0) fields.push('variables');
  if (variables && Object.keys(variables.secrets).length > 0) fields.push('secretVariables');
  return {
    headersSealed: fields.includes('headers') && headers ? sealHeaders(key, copyOwner(suiteRunId), headers) : null,
    variablesSealed:
      variables && fields.some((f) => f !== 'headers') ? sealRunVariables(key, copyOwner(suiteRunId), variables) : null,
    sealedFields: fields.length > 0 ? fields.join(',') : null,
  };
}

/** Opens a suite run's sealed copy (throws when it was sealed under another key or for another suite run). */
export function openSuiteRunCopy(
  key: Buffer,
  suiteRunId: string,
  sealed: { headersSealed: Uint8Array | null; variablesSealed: Uint8Array | null },
): SuiteRunCopy {
  return {
    headers: sealed.headersSealed ? openHeaders(key, copyOwner(suiteRunId), sealed.headersSealed) : null,
    variables: sealed.variablesSealed ? openRunVariables(key, copyOwner(suiteRunId), sealed.variablesSealed) : null,
  };
}

/** The fields of `suite_runs.sealed_fields`. */
export function readSealedFields(value: string | null): SealedField[] {
  if (!value) return [];
  return value
    .split(',')
    .filter((f): f is SealedField => f === 'headers' || f === 'variables' || f === 'secretVariables');
}
