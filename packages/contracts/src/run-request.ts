import { evidenceSettingsOrNull, type EvidenceSettings } from './evidence';
import { HEADER_LIMITS, isOverCap, overCap, storableText, VARIABLE_LIMITS } from './limits';
import type { ProblemCode, ProblemFieldError } from './problems';
import { FORBIDDEN_HEADER_NAMES, HEADER_VALUE_RULE, isHeaderValue, RunCreateRequest } from './runs';
import { compileValidator, escapePointer } from './validate';

/** The three ways of addressing what to run, decided from a valid body. */
export type RunTarget =
  | { mode: 'test'; testId: string }
  | { mode: 'suite'; projectSlug: string; suiteSlug: string }
  | { mode: 'project'; projectSlug: string };

export type ParsedRunRequest = {
  target: RunTarget;
  baseUrl: string | null;
  headers: Record<string, string> | null;
  /** `{{vars.NAME}}` values, null when none. */
  variables: Record<string, string> | null;
  /** `{{secrets.NAME}}` values, null when none. */
  secretVariables: Record<string, string> | null;
  /** The request's evidence settings (the keys it gives), null when none. */
  evidence: EvidenceSettings | null;
  /** The request's `retries`, overriding the tests'; null when it gives none. */
  retries: number | null;
  /** The request's `workers`, overriding the Playwright config's; null when it gives none. */
  workers: number | null;
  /** The deployment to run (`deploymentId`); null: the project's active one. */
  deploymentId: string | null;
};

export type RunRequestProblem = {
  code: Extract<ProblemCode, 'invalid_body' | 'limit_exceeded' | 'both_test_and_project' | 'suite_without_project'>;
  detail: string;
  errors: ProblemFieldError[];
};

/**
 * Compiled on first use: the CLI loads this module for `checkBaseUrl` and never validates a body,
 * and compiling the schema is most of the time `testrun --version` would otherwise take.
 */
const validateShape = compileValidator(RunCreateRequest);
const forbidden = new Set<string>(FORBIDDEN_HEADER_NAMES);

/**
 * Checks a run-creation body against every rule of the contract and returns what to run, or the
 * problem: `both_test_and_project` and `suite_without_project` take precedence over other errors,
 * as the contract names them first. A body whose only faults are values over caps is 422
 * `limit_exceeded`; any other fault makes it 400 `invalid_body` (listing the caps too).
 */
export function parseRunCreateRequest(body: unknown): ParseResult {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return invalid('The body must be a JSON object.', [{ path: '', message: 'must be a JSON object' }]);
  }
  const raw = body as Record<string, unknown>;
  if (raw.testId !== undefined && raw.projectSlug !== undefined) {
    return refuse('both_test_and_project', 'The body has both testId and projectSlug; give exactly one of them.', {
      path: '/testId',
      message: 'must not be given together with projectSlug',
    });
  }
  if (raw.suiteSlug !== undefined && raw.projectSlug === undefined) {
    return refuse('suite_without_project', 'suiteSlug is only valid together with projectSlug.', {
      path: '/suiteSlug',
      message: 'requires projectSlug',
    });
  }
  const shape = validateShape(body);
  const errors: ProblemFieldError[] = shape.ok ? [] : [...shape.errors];
  if (raw.testId === undefined && raw.projectSlug === undefined) {
    errors.push({ path: '', message: 'must have exactly one of testId or projectSlug' });
  }
  if (typeof raw.baseUrl === 'string') {
    const problem = checkBaseUrl(raw.baseUrl);
    if (problem) errors.push({ path: '/baseUrl', message: problem });
  }
  if (raw.headers !== null && typeof raw.headers === 'object' && !Array.isArray(raw.headers)) {
    errors.push(...checkHeaders(raw.headers as Record<string, unknown>));
  }
  for (const field of ['variables', 'secretVariables'] as const) {
    const map = raw[field];
    if (map !== null && typeof map === 'object' && !Array.isArray(map))
      errors.push(...checkVariables(field, map as Record<string, unknown>));
  }
  if (errors.length > 0) {
    const listed = errors.map((e) => `${e.path || 'body'} ${e.message}`).join('; ');
    if (errors.every((e) => isOverCap(e.message)))
      return refuse('limit_exceeded', `The body is over a limit: ${listed}.`, ...errors);
    return invalid(`The body is invalid: ${listed}.`, errors);
  }
  if (!shape.ok) return invalid('The body is invalid.', errors);
  const value = shape.value;
  const headers = value.headers && Object.keys(value.headers).length > 0 ? value.headers : null;
  const variables = nonEmpty(value.variables);
  const secretVariables = nonEmpty(value.secretVariables);
  return {
    ok: true,
    value: {
      target: targetOf(value),
      baseUrl: value.baseUrl ?? null,
      headers,
      variables,
      secretVariables,
      evidence: evidenceSettingsOrNull(value.evidence),
      retries: value.retries ?? null,
      workers: value.workers ?? null,
      deploymentId: value.deploymentId ?? null,
    },
  };
}

function nonEmpty(map: Record<string, string> | undefined): Record<string, string> | null {
  return map && Object.keys(map).length > 0 ? map : null;
}

/** What a valid body addresses; the checks above guarantee exactly one of testId and projectSlug. */
function targetOf(value: RunCreateRequest): RunTarget {
  if (value.testId !== undefined) return { mode: 'test', testId: value.testId };
  if (value.projectSlug === undefined) throw new Error('a valid run request has testId or projectSlug');
  if (value.suiteSlug !== undefined)
    return { mode: 'suite', projectSlug: value.projectSlug, suiteSlug: value.suiteSlug };
  return { mode: 'project', projectSlug: value.projectSlug };
}

type ParseResult = { ok: true; value: ParsedRunRequest } | { ok: false; problem: RunRequestProblem };

function invalid(detail: string, errors: ProblemFieldError[]): ParseResult {
  return refuse('invalid_body', detail, ...errors);
}

function refuse(code: RunRequestProblem['code'], detail: string, ...errors: ProblemFieldError[]): ParseResult {
  // Paths echo names the caller sent; text Postgres cannot store is echoed as U+FFFD.
  const storable = errors.map((e) => ({ path: storableText(e.path), message: e.message }));
  return { ok: false, problem: { code, detail: storableText(detail), errors: storable } };
}

/** Returns why a target URL is unacceptable, or null. */
export function checkBaseUrl(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http(s) URL';
  if (url.username || url.password)
    return 'must not contain credentials; send them in headers (for example Authorization)';
  if (url.hash) return 'must not contain a fragment';
  return null;
}

/** The rules of a request's `headers` beyond their JSON Schema (forbidden names, duplicates, sizes). */
export function checkHeaders(headers: Record<string, unknown>): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    const path = `/headers/${escapePointer(name)}`;
    if (forbidden.has(lower))
      errors.push({ path, message: `is a header a run may not set (${FORBIDDEN_HEADER_NAMES.join(', ')})` });
    if (seen.has(lower)) errors.push({ path, message: 'is given twice (header names are case-insensitive)' });
    if (name.length > HEADER_LIMITS.maxNameLength)
      errors.push({
        path,
        message: overCap(
          'HEADER_LIMITS.maxNameLength',
          `is a name longer than ${HEADER_LIMITS.maxNameLength} characters`,
        ),
      });
    seen.add(lower);
    if (typeof value === 'string') {
      // The message never quotes the value: it may be a secret.
      if (!isHeaderValue(value)) errors.push({ path, message: `must hold ${HEADER_VALUE_RULE}` });
      total += Buffer.byteLength(name) + Buffer.byteLength(value);
    }
  }
  if (total > HEADER_LIMITS.maxTotalBytes) {
    errors.push({
      path: '/headers',
      message: overCap(
        'HEADER_LIMITS.maxTotalBytes',
        `has ${total} bytes of names and values; must not exceed ${HEADER_LIMITS.maxTotalBytes} in total`,
      ),
    });
  }
  return errors;
}

/** The rules of a request's `variables` or `secretVariables` beyond their JSON Schema (NUL, total size). */
export function checkVariables(
  field: 'variables' | 'secretVariables',
  map: Record<string, unknown>,
): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  let total = 0;
  for (const [name, value] of Object.entries(map)) {
    if (typeof value !== 'string') continue;
    // The message never quotes the value: it may be a secret.
    if (value.includes('\0'))
      errors.push({ path: `/${field}/${escapePointer(name)}`, message: 'must not contain NUL' });
    total += Buffer.byteLength(name) + Buffer.byteLength(value);
  }
  if (total > VARIABLE_LIMITS.maxTotalBytes) {
    errors.push({
      path: `/${field}`,
      message: overCap(
        'VARIABLE_LIMITS.maxTotalBytes',
        `has ${total} bytes of names and values; must not exceed ${VARIABLE_LIMITS.maxTotalBytes} in total`,
      ),
    });
  }
  return errors;
}
