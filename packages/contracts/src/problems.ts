import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './enums';

/** Every problem code the API can answer with, its HTTP status and its title. */
export const PROBLEMS = {
  invalid_body: { status: 400, title: 'The request body is invalid' },
  both_test_and_project: { status: 400, title: 'Give either testId or projectSlug, not both' },
  suite_without_project: { status: 400, title: 'suiteSlug needs projectSlug' },
  unauthorized: { status: 401, title: 'A valid API key is required' },
  key_paused: { status: 403, title: 'This API key is paused' },
  key_creator_not_member: { status: 403, title: "This API key's creator is no longer a member of the workspace" },
  not_found: { status: 404, title: 'Not found' },
  idempotency_request_in_progress: { status: 409, title: 'A request with this Idempotency-Key is still being handled' },
  payload_too_large: { status: 413, title: 'The request body is too large' },
  unsupported_media_type: { status: 415, title: 'The request body must be application/json' },
  plan_limit_exceeded: { status: 422, title: "The run would exceed the workspace's plan limits" },
  empty_suite: { status: 422, title: 'There are no tests to run' },
  idempotency_key_reused: { status: 422, title: 'This Idempotency-Key was used with a different request' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal error' },
  service_unavailable: { status: 503, title: 'The service is temporarily unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;
export const PROBLEM_CODES = Object.keys(PROBLEMS) as ProblemCode[];

/** The `type` URI of a problem: a relative reference that the API serves as documentation. */
export function problemType(code: ProblemCode): string {
  return `/api/v1/problems/${code}`;
}

export const ProblemFieldError = Type.Object(
  {
    path: Type.String({ description: 'JSON Pointer to the offending part of the body ("" for the body itself).' }),
    message: Type.String(),
  },
  { additionalProperties: false },
);
export type ProblemFieldError = Static<typeof ProblemFieldError>;

/** RFC 9457 problem details, served as application/problem+json. */
export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: StringEnum(PROBLEM_CODES as unknown as readonly ProblemCode[]),
    errors: Type.Optional(Type.Array(ProblemFieldError)),
  },
  { additionalProperties: false },
);
export type Problem = Static<typeof Problem>;
