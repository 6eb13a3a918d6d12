import { Type, type Static } from '@sinclair/typebox';
import { RunAttachments } from './attachments';
import { RunVisualChanges, SuiteRunVisualCounts } from './visual';
import { Nullable, RunStatus, SkipReason, SuiteRunStatus } from './enums';
import { EvidencePolicy, EvidenceSettings } from './evidence';
import { capOf, HEADER_LIMITS, RETRY_LIMITS, WORKERS_LIMITS } from './limits';
import { variableMap } from './variables';
import { QueueWait } from './queue-wait';
import { Instant, Milliseconds, RunError, RunFailure, TestLocation } from './run-parts';
import { FailedSetup, SetupTest } from './setup-tests';

export { RunError, RunFailure, TestLocation } from './run-parts';
export { FailedSetup, SetupArtifact, SetupTest } from './setup-tests';

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

/** The header value rule, as the problem messages and docs state it. */
export const HEADER_VALUE_RULE = 'only Latin-1 characters (U+0000 to U+00FF), and no CR, LF or NUL';

/** A character a browser cannot send in a header value: CR, LF, NUL, or anything beyond Latin-1. */
const UNSENDABLE_IN_HEADER_VALUE = /[\r\n\0\u0100-\uffff]/;

/**
 * Whether `value` can be sent as a header value by a browser: Latin-1 only (what HTTP/1.1 carries
 * as one byte per character; fetch and Chromium refuse anything beyond), and no CR, LF or NUL.
 */
export function isHeaderValue(value: string): boolean {
  return !UNSENDABLE_IN_HEADER_VALUE.test(value);
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
      Type.Record(
        Type.String(),
        Type.String({ maxLength: HEADER_LIMITS.maxValueLength, ...capOf('HEADER_LIMITS.maxValueLength') }),
        {
          maxProperties: HEADER_LIMITS.maxHeaders,
          ...capOf('HEADER_LIMITS.maxHeaders'),
          // The length of a name is checked with the other limits of `headers` (run-request.ts), so
          // that a long name is refused naming its cap.
          propertyNames: { minLength: 1, pattern: HEADER_NAME_PATTERN },
          description: `Sent with requests to the target's origin only. Never stored in clear, logged or returned. Names are at most ${HEADER_LIMITS.maxNameLength} characters.`,
        },
      ),
    ),
    variables: Type.Optional(variableMap('Plain values the steps reference as {{vars.NAME}}.')),
    secretVariables: Type.Optional(
      variableMap(
        'Values the steps reference as {{secrets.NAME}}; they override the project and workspace secrets of the same name, are sealed with the run, masked in every output and erased when it ends.',
      ),
    ),
    evidence: Type.Optional(EvidenceSettings),
    deploymentId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'Run this deployment of the project (`dep_…`, active or a preview) instead of the active one: how a pull request runs its own version of the tests. It must be a deployment of the addressed project (404 otherwise).',
      }),
    ),
    retries: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: RETRY_LIMITS.maxRetries,
        ...capOf('RETRY_LIMITS.maxRetries'),
        description:
          "How many times each run's test is attempted again after a failed or error attempt; overrides the tests' `retries` of the project file for this request, and a Playwright test's config `retries` (0 included: `retries: 0` turns the config's off).",
      }),
    ),
    workers: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: WORKERS_LIMITS.maxWorkers,
        ...capOf('WORKERS_LIMITS.maxWorkers'),
        description:
          "As `playwright test --workers`: the most Playwright workers this request's Playwright tests run in, overriding their config's own `workers` (with 1, a suite run's tests run one at a time, in order). The worker's free slots bound it still. Step tests ignore it.",
      }),
    ),
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

/** A test attempt that was retried: how it ended, as a run's outcome reads. */
export const RunAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, description: '1-based number of the test attempt.' }),
    status: Type.Union([Type.Literal('failed'), Type.Literal('error')]),
    result_summary: Type.String({ description: 'One human sentence.' }),
    error: Nullable(RunError),
    started_at: Instant('When the attempt started.'),
    finished_at: Instant('When the attempt ended.'),
    duration_ms: Milliseconds('From started_at to finished_at.'),
  },
  { additionalProperties: false },
);
export type RunAttempt = Static<typeof RunAttempt>;

export const Run = Type.Object(
  {
    id: Type.String(),
    status: RunStatus,
    result_summary: Type.String({ description: 'One human sentence.' }),
    error: Nullable(RunError),
    skip_reason: Nullable(SkipReason),
    evidence: Type.Optional(EvidencePolicy),
    test_id: Type.String({ description: 'The test this run ran.' }),
    test_name: Type.String({ description: 'The name of the test, as it was when the run was created.' }),
    suite_run_id: Nullable(
      Type.String({ description: 'The suite run this run belongs to; null for a single-test run.' }),
    ),
    deployment_id: Nullable(
      Type.String({
        description:
          'The deployment of the project whose definitions the run executed (fixed when it was enqueued); null for runs from before deployments.',
      }),
    ),
    created_at: Instant('When the run was enqueued.'),
    started_at: Nullable(
      Instant('When a worker started the run; null while it is queued, and for a run that never started.'),
    ),
    finished_at: Nullable(Instant('When the run reached its terminal status; null until then.')),
    duration_ms: Nullable(
      Milliseconds(
        'From started_at to finished_at, as the worker measured it; null until the run ends, and for a run that never started.',
      ),
    ),
    attempts: Type.Integer({
      minimum: 0,
      description:
        "How many times the test was attempted: 0 before a worker starts it, then 1 plus its retries so far (the service's, or the tries a Playwright test's config made). A worker lost and replaced mid-run does not count as another attempt.",
    }),
    retries: Type.Integer({
      minimum: 0,
      maximum: RETRY_LIMITS.maxRetries,
      description:
        "Retries the service allows after a failed or error attempt: the request's, else the test's. A Playwright test retried by its config's `retries` has its tries as attempts too (in `attempts` and `previous_attempts`), not counted here.",
    }),
    flaky: Type.Boolean({
      description: "True when the run passed after a failed or error attempt (a Playwright config's retries included).",
    }),
    previous_attempts: Type.Array(RunAttempt, {
      description:
        'The attempts before the current one, oldest first (each failed or ended in error and was retried); the run itself is its last attempt.',
    }),
    blocked_request_count: Type.Integer({
      minimum: 0,
      description:
        "Requests the target network policy refused while the run's last attempt ran (each named in the view; the first 100 of a sandbox or browser context are kept). They make the run `error`/`target_blocked` only when it failed on one of them; a run that passed with some is `passed`.",
    }),
    location: Type.Optional(TestLocation),
    queue_wait: Type.Optional(QueueWait),
    attachments: RunAttachments,
    visual_changes: RunVisualChanges,
    failure: Type.Optional(
      Type.Composite([RunFailure], {
        description:
          "A `failed` run's error as its failing step recorded it (its last attempt's); absent otherwise, and when no step recorded one.",
      }),
    ),
    failed_setup: Type.Optional(
      Type.Composite([FailedSetup], {
        description:
          "An `error`/`setup_failed` run: the setup test whose failure it ended on (an entry of its suite run's `setup_tests`, or of its own for a run outside a suite run); absent otherwise.",
      }),
    ),
    setup_tests: Type.Optional(
      Type.Array(SetupTest, {
        description:
          "A run outside a suite run: the setup tests its Playwright test depended on, in the order they ended, one entry each whatever its attempts; absent for a run of a suite run (its suite run's `setup_tests` has them) and for a run without any.",
      }),
    ),
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
    durationMs: Nullable(Milliseconds("The run's duration_ms: null until it ends, and for a run that never started.")),
    flaky: Type.Boolean({ description: "The run's flaky: it passed after a failed or error attempt." }),
    attempts: Type.Integer({ minimum: 0, description: "The run's attempts." }),
    location: Type.Optional(TestLocation),
    attachmentCount: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          "How many files the test attached in the run's current attempt (the length of GET run's `attachments`); absent when none.",
      }),
    ),
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
    flaky_count: Type.Integer({
      minimum: 0,
      description: 'Children that passed after a failed or error attempt (counted in passed_count too).',
    }),
    ...SuiteRunVisualCounts,
    suiteRunUrl: Type.String({ format: 'uri' }),
    tests: Type.Array(TestEntry),
    deployment_id: Nullable(
      Type.String({
        description:
          'The deployment of the project whose definitions the suite run executed; null for suite runs from before deployments.',
      }),
    ),
    created_at: Instant('When the suite run was enqueued.'),
    started_at: Nullable(Instant('When the first of its runs left the queue; null while all are queued.')),
    finished_at: Nullable(Instant('When the last of its runs reached a terminal status; null until then.')),
    duration_ms: Nullable(
      Milliseconds(
        'From started_at to finished_at; null until it ends, and for a suite run none of whose runs started (the time in the queue is started_at − created_at).',
      ),
    ),
    rerun_of: Nullable(
      Type.String({
        description:
          'The suite run this one reruns (POST /api/v1/suite-runs/{suiteRunId}/rerun); null for a suite run enqueued by POST /api/v1/runs.',
      }),
    ),
    setup_tests: Type.Optional(
      Type.Array(SetupTest, {
        description:
          'The setup tests its Playwright tests depended on, in the order they ended, once each has run; absent for a suite run without any. Not counted in total_count or any other counter.',
      }),
    ),
    queue_wait: Type.Optional(QueueWait),
  },
  { additionalProperties: false },
);
export type SuiteRun = Static<typeof SuiteRun>;
