import { CloneType, Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './enums';
import { isOverCap, storableText } from './limits';
import type { ProblemCode, ProblemFieldError } from './problems';
import { checkHeaders, checkVariables } from './run-request';
import { RunCreateRequest } from './runs';
import { compileValidator } from './validate';

/** Which children of a suite run a rerun runs again. */
export const RERUN_SELECTIONS = ['failed', 'all'] as const;
export type RerunSelection = (typeof RERUN_SELECTIONS)[number];

const { headers, variables, secretVariables } = RunCreateRequest.properties;

/** Body of POST /api/v1/suite-runs/{suiteRunId}/rerun. */
export const SuiteRunRerunRequest = Type.Object(
  {
    only: StringEnum(RERUN_SELECTIONS, {
      description: '`failed`: the children that ended failed or error; `all`: every child.',
    }),
    headers: CloneType(headers, {
      description:
        "Replace the original's headers. Required when the original had headers and its sealed copy was already erased (24 hours after it was created).",
    }),
    variables: CloneType(variables, {
      description:
        "Replace the original's variables. Required when the original had some and its sealed copy was already erased.",
    }),
    secretVariables: CloneType(secretVariables, {
      description:
        "Replace the original's secret variables. Required when the original had some and its sealed copy was already erased.",
    }),
  },
  { additionalProperties: false },
);
export type SuiteRunRerunRequest = Static<typeof SuiteRunRerunRequest>;

/** A rerun request, checked: the values given are non-empty maps, or null. */
export type ParsedRerunRequest = {
  only: RerunSelection;
  headers: Record<string, string> | null;
  variables: Record<string, string> | null;
  secretVariables: Record<string, string> | null;
};

export type RerunRequestProblem = {
  code: Extract<ProblemCode, 'invalid_body' | 'limit_exceeded'>;
  detail: string;
  errors: ProblemFieldError[];
};

const validateShape = compileValidator(SuiteRunRerunRequest);

/**
 * Checks a rerun body: its shape, then the headers and variables by the rules of POST /api/v1/runs.
 * A body whose only faults are values over caps is 422 `limit_exceeded`, any other 400 `invalid_body`.
 */
export function parseRerunRequest(
  body: unknown,
): { ok: true; value: ParsedRerunRequest } | { ok: false; problem: RerunRequestProblem } {
  const shape = validateShape(body);
  const errors: ProblemFieldError[] = shape.ok ? [] : [...shape.errors];
  const raw =
    body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  if (isMap(raw.headers)) errors.push(...checkHeaders(raw.headers));
  for (const field of ['variables', 'secretVariables'] as const) {
    const map = raw[field];
    if (isMap(map)) errors.push(...checkVariables(field, map));
  }
  if (!shape.ok || errors.length > 0) {
    const listed = errors.map((e) => `${e.path || 'body'} ${e.message}`).join('; ');
    const code = errors.length > 0 && errors.every((e) => isOverCap(e.message)) ? 'limit_exceeded' : 'invalid_body';
    const detail =
      code === 'limit_exceeded' ? `The body is over a limit: ${listed}.` : `The body is invalid: ${listed}.`;
    const storable = errors.map((e) => ({ path: storableText(e.path), message: e.message }));
    return { ok: false, problem: { code, detail: storableText(detail), errors: storable } };
  }
  const value = shape.value;
  return {
    ok: true,
    value: {
      only: value.only,
      headers: nonEmpty(value.headers),
      variables: nonEmpty(value.variables),
      secretVariables: nonEmpty(value.secretVariables),
    },
  };
}

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function nonEmpty(map: Record<string, string> | undefined): Record<string, string> | null {
  return map && Object.keys(map).length > 0 ? map : null;
}
