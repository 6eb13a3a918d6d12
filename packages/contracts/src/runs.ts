import { Type, type Static } from '@sinclair/typebox';
import { Nullable, RunErrorCode, RunStatus, SkipReason, SuiteRunStatus } from './enums';
import { EvidencePolicy, EvidenceSettings } from './evidence';
import { variableMap } from './variables';

/** Limits on the user-supplied `headers` of a run. */
export const HEADER_LIMITS = {
  maxHeaders: 32,
  maxNameLength: 128,
  maxValueLength: 8_192,
  maxTotalBytes: 16_384,
} as const;

/** Header names a run may not set: hop-by-hop headers and those the browser must own. */
export const FORBIDDEN_HEADER_NAMES = [
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
] as const;

/** A header name: an RFC 9110 token. */
const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
const HEADER_NAME = new RegExp(HEADER_NAME_PATTERN);

/** Whether `name` may be a header name (RFC 9110 token characters only). */
export function isHeaderName(name: string): boolean {
  return HEADER_NAME.test(name);
}

export const RunCreateRequest = Type.Object(
  {
    testId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Addresses a single test.' })),
    projectSlug: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Addresses a project.' })),
    suiteSlug: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Only with projectSlug; narrows to one suite.' }),
    ),
    baseUrl: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2_048,
        description: 'Absolute http(s) URL that replaces the target URL for this run only.',
      }),
    ),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: HEADER_LIMITS.maxValueLength }), {
        maxProperties: HEADER_LIMITS.maxHeaders,
        propertyNames: { minLength: 1, maxLength: HEADER_LIMITS.maxNameLength, pattern: HEADER_NAME_PATTERN },
        description: "Sent with requests to the target's origin only. Never stored in clear, logged or returned.",
      }),
    ),
    variables: Type.Optional(variableMap('Plain values the steps reference as {{vars.NAME}}.')),
    secretVariables: Type.Optional(
      variableMap(
        'Values the steps reference as {{secrets.NAME}}; they override the project and workspace secrets of the same name, are sealed with the run, masked in every output and erased when it ends.',
      ),
    ),
    evidence: Type.Optional(EvidenceSettings),
  },
  { additionalProperties: false },
);
export type RunCreateRequest = Static<typeof RunCreateRequest>;

export const SingleRunCreated = Type.Object({ runId: Type.String() }, { additionalProperties: false });
export type SingleRunCreated = Static<typeof SingleRunCreated>;
export const SuiteRunCreated = Type.Object({ suiteRunId: Type.String() }, { additionalProperties: false });
export type SuiteRunCreated = Static<typeof SuiteRunCreated>;
export const ProjectRunsCreated = Type.Object({ runIds: Type.Array(Type.String()) }, { additionalProperties: false });
export type ProjectRunsCreated = Static<typeof ProjectRunsCreated>;
export const RunCreateResponse = Type.Union([SingleRunCreated, SuiteRunCreated, ProjectRunsCreated]);
export type RunCreateResponse = Static<typeof RunCreateResponse>;

export const RunError = Type.Object(
  {
    code: RunErrorCode,
    message: Type.String(),
    step: Nullable(Type.Integer({ minimum: 1, description: '1-based index of the step that was running.' })),
  },
  { additionalProperties: false },
);
export type RunError = Static<typeof RunError>;

export const Run = Type.Object(
  {
    id: Type.String(),
    status: RunStatus,
    result_summary: Type.String({ description: 'One human sentence.' }),
    error: Nullable(RunError),
    skip_reason: Nullable(SkipReason),
    evidence: Type.Optional(EvidencePolicy),
  },
  { additionalProperties: false },
);
export type Run = Static<typeof Run>;

export const TestEntry = Type.Object(
  {
    runId: Type.String(),
    name: Type.String(),
    status: RunStatus,
    skipReason: Nullable(SkipReason),
  },
  { additionalProperties: false },
);
export type TestEntry = Static<typeof TestEntry>;

export const SuiteRun = Type.Object(
  {
    id: Type.String(),
    status: SuiteRunStatus,
    total_count: Type.Integer({ minimum: 0 }),
    passed_count: Type.Integer({ minimum: 0 }),
    failed_count: Type.Integer({ minimum: 0 }),
    error_count: Type.Integer({ minimum: 0 }),
    skipped_count: Type.Integer({ minimum: 0 }),
    suiteRunUrl: Type.String({ format: 'uri' }),
    tests: Type.Array(TestEntry),
  },
  { additionalProperties: false },
);
export type SuiteRun = Static<typeof SuiteRun>;
