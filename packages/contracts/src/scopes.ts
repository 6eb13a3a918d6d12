import { StringEnum } from './enums';

/**
 * What an API key may do over the API. `run`: enqueue, read, cancel, rerun, list (what every key
 * could always do); `preview`: also create inactive deployments and run them; `deploy`: also
 * activate deployments and manage secrets and projects. Each widens the one before it, but a key
 * holds them as a set (`api_keys.scopes`, a CHECK holds it to these names), so the model can grow
 * beyond a ladder; a key may do what a route needs when it holds that scope.
 */
export const API_KEY_SCOPES = ['run', 'preview', 'deploy'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];
export const ApiKeyScopeSchema = StringEnum(API_KEY_SCOPES, {
  description: 'The scope of API key a route needs: `run` ⊂ `preview` ⊂ `deploy`.',
});

/** The scope a new key has when none is asked for, and that every key made before scopes has. */
export const DEFAULT_API_KEY_SCOPES: readonly ApiKeyScope[] = ['run'];

export function isApiKeyScope(value: string): value is ApiKeyScope {
  return (API_KEY_SCOPES as readonly string[]).includes(value);
}

/**
 * The scopes a key is given for the ones asked: each with every narrower one it implies
 * (`deploy` brings `preview` and `run`), in the order of {@link API_KEY_SCOPES}.
 */
export function withImpliedScopes(asked: readonly ApiKeyScope[]): ApiKeyScope[] {
  const widest = Math.max(...asked.map((s) => API_KEY_SCOPES.indexOf(s)));
  return API_KEY_SCOPES.slice(0, widest + 1);
}

/**
 * Reads a comma-separated list of scopes (`run,preview`), or says what is wrong with it: an
 * unknown name is refused, never dropped.
 */
export function parseApiKeyScopes(text: string): { ok: true; scopes: ApiKeyScope[] } | { ok: false; message: string } {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !isApiKeyScope(n));
  if (names.length === 0 || unknown.length > 0) {
    const what = names.length === 0 ? 'no scope given' : `unknown scope ${unknown.map((u) => `"${u}"`).join(', ')}`;
    return { ok: false, message: `${what}; the scopes are ${API_KEY_SCOPES.join(', ')}` };
  }
  return { ok: true, scopes: withImpliedScopes(names.filter(isApiKeyScope)) };
}
