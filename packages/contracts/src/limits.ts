/**
 * Limits the API enforces on requests, named in one place so the problem details, the OpenAPI
 * document and docs/API.md state the same numbers. Limits of a project file's content (steps per
 * test, tests per suite, `wait`, timeouts) are `STEP_LIMITS` in project-file.ts; limits of a run's
 * `headers` are `HEADER_LIMITS` in runs.ts.
 */
export const REQUEST_LIMITS = {
  /** Largest request body, in bytes (413 `payload_too_large`). */
  maxBodyBytes: 256 * 1024,
  /** Largest request line plus header block, in bytes (431 `request_header_fields_too_large`). */
  maxHeaderBytes: 16 * 1024,
  /** Most header fields in one request (431 `request_header_fields_too_large`). */
  maxHeaderCount: 100,
  /**
   * Most runs one POST /api/v1/runs may create (422 `too_many_runs`, nothing created). Creating
   * this many runs in one transaction stays well inside the transaction's time budget.
   */
  maxRunsPerRequest: 1_000,
} as const;

/** Lone UTF-16 surrogates: not valid Unicode, so they cannot be stored as UTF-8 text. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why Postgres cannot store `text` unchanged (a NUL, or an unpaired surrogate), or null when it can. */
export function unstorableReason(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain a NUL character';
  if (LONE_SURROGATE.test(text)) return 'must not contain an unpaired UTF-16 surrogate';
  return null;
}

const UNSTORABLE = new RegExp(`\u0000|${LONE_SURROGATE.source}`, 'g');

/** `text` with every NUL and unpaired surrogate replaced by U+FFFD, so it can be stored and echoed. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE, '\uFFFD');
}

/**
 * The first string in a JSON value (a property name or a string value, at any depth) that Postgres
 * could not store unchanged, with its JSON Pointer and the reason; null when there is none. Walks
 * with its own stack, so a deeply nested body cannot overflow the call stack.
 */
export function findUnstorableText(value: unknown): { path: string; message: string } | null {
  const pending: { path: string; value: unknown }[] = [{ path: '', value }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { path, value: current } = next;
    if (typeof current === 'string') {
      const message = unstorableReason(current);
      if (message) return { path, message };
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    const entries: [string, unknown][] = Array.isArray(current)
      ? current.map((item: unknown, index) => [String(index), item])
      : Object.entries(current);
    for (const [name, item] of entries.reverse()) {
      const childPath = `${path}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      const nameReason = unstorableReason(name);
      if (nameReason) return { path: childPath, message: `has a name that ${nameReason}` };
      pending.push({ path: childPath, value: item });
    }
  }
  return null;
}
