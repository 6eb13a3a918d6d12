import { isProblemCode, PROBLEMS, type ProblemFieldError } from '@testrun/contracts';
import { parseRetryAfter } from './backoff';
import { TestrunApiError } from './errors';

/** The JSON body of a successful response; a body that is not JSON is an `unexpected_response`. */
export async function readJson(res: globalThis.Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new TestrunApiError({
      status: res.status,
      code: 'unexpected_response',
      title: 'Unexpected response',
      detail: `The API answered ${res.status} with a body that is not JSON.`,
    });
  }
}

function isFieldError(value: unknown): value is ProblemFieldError {
  return (
    typeof value === 'object' &&
    value !== null &&
    'path' in value &&
    typeof value.path === 'string' &&
    'message' in value &&
    typeof value.message === 'string'
  );
}

/** The parts of a problem document a client relies on, from whatever JSON object came back. */
function readProblem(value: unknown) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const field = (name: string): unknown => (name in value ? (value as Record<string, unknown>)[name] : undefined);
  const code = field('code');
  const title = field('title');
  const detail = field('detail');
  const errors = field('errors');
  return {
    code: typeof code === 'string' && isProblemCode(code) ? code : null,
    title: typeof title === 'string' ? title : null,
    detail: typeof detail === 'string' ? detail : null,
    errors: Array.isArray(errors) ? errors.filter(isFieldError) : [],
  };
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The error of a failed response, from its problem document when it has one. */
export async function toApiError(res: globalThis.Response, nowMs: number): Promise<TestrunApiError> {
  const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), nowMs);
  const problem = readProblem(parseOrNull(await res.text()));
  if (problem?.code) {
    const { title } = PROBLEMS[problem.code];
    return new TestrunApiError({
      status: res.status,
      code: problem.code,
      title: problem.title ?? title,
      detail: problem.detail ?? title,
      errors: problem.errors,
      retryAfterMs,
    });
  }
  if (problem?.detail) {
    return new TestrunApiError({
      status: res.status,
      code: 'unexpected_response',
      title: problem.title ?? 'Error',
      detail: problem.detail,
      errors: problem.errors,
      retryAfterMs,
    });
  }
  return new TestrunApiError({
    status: res.status,
    code: 'unexpected_response',
    title: res.statusText || 'Unexpected response',
    detail: `The API answered HTTP ${res.status} without a problem document.`,
    retryAfterMs,
  });
}
