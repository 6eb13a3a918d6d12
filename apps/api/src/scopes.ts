import type { ApiKeyScope } from '@testrun/contracts';
import { ApiError } from './errors';

/** The 403 of a key without `scope`; it names the scope and nothing of the resource asked for. */
function insufficientScope(scope: ApiKeyScope): ApiError {
  return new ApiError(
    'insufficient_scope',
    `This request needs an API key with the "${scope}" scope; this key's scopes do not include it.`,
    { requiredScope: scope },
  );
}

/**
 * Refuses the request (403 `insufficient_scope`) unless its key holds `scope`: for a handler whose
 * need depends on what it is asked (a deployment created inactive needs `preview`, activated
 * `deploy`), beyond the scope its declaration names, which the builder has already checked. Call
 * it before reading anything the request names, so the answer is the same whether it exists.
 */
export function requireScope(context: { scopes: readonly ApiKeyScope[] }, scope: ApiKeyScope): void {
  if (!context.scopes.includes(scope)) throw insufficientScope(scope);
}
