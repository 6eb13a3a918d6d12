import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './enums';
import { capOf, isOverCap, storableText, VARIABLE_LIMITS } from './limits';
import type { ProblemCode, ProblemFieldError } from './problems';
import { compileValidator } from './validate';
import { isVariableName } from './variables';

/**
 * Secret variables over the API: the values steps reference as `{{secrets.NAME}}`, stored sealed
 * per workspace (project null) or per project. A value goes in and never comes out.
 */

/** Body of PUT /api/v1/secrets/{name} and /api/v1/projects/{projectSlug}/secrets/{name}. */
export const SecretSetRequest = Type.Object(
  {
    value: Type.String({
      minLength: 1,
      maxLength: VARIABLE_LIMITS.maxValueLength,
      ...capOf('VARIABLE_LIMITS.maxValueLength'),
      description: 'The secret value; stored sealed and never shown again by any response.',
    }),
  },
  { additionalProperties: false },
);
export type SecretSetRequest = Static<typeof SecretSetRequest>;

/** A stored secret as the API shows it: its name and dates, never its value. */
export const Secret = Type.Object(
  {
    name: Type.String(),
    project_slug: Nullable(Type.String({ description: 'The project it belongs to; null for the workspace.' })),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export type Secret = Static<typeof Secret>;

export const SecretList = Type.Object(
  { secrets: Type.Array(Secret, { description: 'By name; values are never listed.' }) },
  { additionalProperties: false },
);
export type SecretList = Static<typeof SecretList>;

/** What a secret's name may be: a variable name (a letter or _, then letters, digits and _; at most 64). */
export const SECRET_NAME_RULE = 'a letter or _, then letters, digits and _; at most 64';

export function isSecretName(name: string): boolean {
  return isVariableName(name);
}

const validateSet = compileValidator(SecretSetRequest);

/**
 * Checks a PUT body: a value over its cap is 422 `limit_exceeded`, any other fault 400
 * `invalid_body` (an empty value, a NUL, a field besides `value`); no message quotes the value.
 */
export function parseSecretSetRequest(
  body: unknown,
): { ok: true; value: SecretSetRequest } | { ok: false; problem: SecretSetProblem } {
  const checked = validateSet(body);
  if (checked.ok) return { ok: true, value: checked.value };
  const { errors } = checked;
  const listed = errors.map((e) => `${e.path || 'body'} ${e.message}`).join('; ');
  const code = errors.every((e) => isOverCap(e.message)) ? 'limit_exceeded' : 'invalid_body';
  const detail = code === 'limit_exceeded' ? `The body is over a limit: ${listed}.` : `The body is invalid: ${listed}.`;
  return { ok: false, problem: { code, detail: storableText(detail), errors } };
}

type SecretSetProblem = {
  code: Extract<ProblemCode, 'invalid_body' | 'limit_exceeded'>;
  detail: string;
  errors: ProblemFieldError[];
};
