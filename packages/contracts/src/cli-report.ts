import { Type, type Static } from '@sinclair/typebox';
import { Nullable, RunStatus, StringEnum, SuiteRunStatus } from './enums';
import { IdempotencyKey } from './idempotency-key';
import { PROBLEM_CODES, ProblemFieldError } from './problems';
import { Run, SetupTest, SuiteRun, TestEntry, TestLocation } from './runs';

/**
 * The documents `testrun run --json` and `testrun status --json` print on stdout: one JSON value
 * that CI scripts read, so its shape is a contract like the API's. Run fields keep the API's names
 * and types (taken from the `Run` schema, never spelled again).
 */

/** Exit codes of `testrun run` and `testrun status`: the contract of the CLI with CI systems. */
export const CLI_EXIT_CODES = {
  passed: 0,
  failed: 1,
  /** error, skipped only, wait budget exceeded, usage or API error. */
  error: 2,
  /** `testrun status` only: the run or suite run is not finished yet. */
  pending: 3,
} as const;
const ExitCode = Type.Union(Object.values(CLI_EXIT_CODES).map((code) => Type.Literal(code)));
export type CliExitCode = (typeof CLI_EXIT_CODES)[keyof typeof CLI_EXIT_CODES];

/** Counts of the runs of a report by status. */
export const ReportCounts = Type.Object(
  {
    total: Type.Integer({ minimum: 0 }),
    queued: Type.Integer({ minimum: 0 }),
    running: Type.Integer({ minimum: 0 }),
    passed: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
    error: Type.Integer({ minimum: 0 }),
    skipped: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type ReportCounts = Static<typeof ReportCounts>;

/** One test of a report: its run's fields as the API gives them, plus what the CLI observed. */
export const ReportTest = Type.Object(
  {
    runId: Type.String(),
    name: Type.String({
      description:
        "The test's name (its run's test_name); the test id or run id only when the wait ran out before any poll was answered.",
    }),
    status: RunStatus,
    result_summary: Nullable(Run.properties.result_summary),
    error: Run.properties.error,
    skip_reason: Run.properties.skip_reason,
    flaky: Type.Boolean({ description: 'True when the run passed after a failed or error attempt (its flaky).' }),
    attempts: Run.properties.attempts,
    previous_attempts: Run.properties.previous_attempts,
    viewUrl: Nullable(Type.String({ description: 'Link to the detailed view of this run, when the API gave one.' })),
    durationMs: Nullable(
      Type.Number({
        description:
          "The run's duration as the service measured it (its duration_ms); null until it ends, and for a run that never started.",
      }),
    ),
    location: Type.Optional(TestLocation),
    failure: Run.properties.failure,
    attachments: Run.properties.attachments,
    visual_changes: Run.properties.visual_changes,
    attachmentCount: TestEntry.properties.attachmentCount,
  },
  { additionalProperties: false },
);
export type ReportTest = Static<typeof ReportTest>;

/**
 * A setup test of the suite run (the API's `setup_tests` entry), with the link to it on the suite
 * run's page. Not among `tests`, nor counted in `counts`.
 */
export const ReportSetupTest = Type.Composite([
  SetupTest,
  Type.Object({
    viewUrl: Nullable(Type.String({ description: "Link to the setup test on its suite run's detailed view." })),
  }),
]);
export type ReportSetupTest = Static<typeof ReportSetupTest>;

/** What was enqueued: the part every successful report shares. */
const enqueued = {
  kind: StringEnum(['test', 'suite', 'project'] as const),
  project: Nullable(Type.String()),
  suite: Nullable(Type.String()),
  testId: Nullable(Type.String()),
  suiteRunId: Nullable(Type.String()),
  runIds: Type.Array(Type.String()),
  suiteRunUrl: Nullable(SuiteRun.properties.suiteRunUrl),
  idempotencyKey: IdempotencyKey,
  replayed: Type.Boolean({ description: 'True when the service replayed an earlier answer to the same key.' }),
};

/** `testrun run --json`: the verdict after waiting. */
export const RunReport = Type.Object(
  {
    ...enqueued,
    status: SuiteRunStatus,
    counts: ReportCounts,
    tests: Type.Array(ReportTest),
    setupTests: Type.Optional(
      Type.Array(ReportSetupTest, {
        description:
          "The suite run's setup tests (Playwright setup projects its tests depended on), as the JUnit report and the text output list them; absent when it has none.",
      }),
    ),
    timedOut: Type.Boolean({ description: 'True when the wait budget ran out before everything was terminal.' }),
    durationMs: Type.Number({ minimum: 0, description: 'Wall time of the wait.' }),
    exitCode: ExitCode,
    message: Type.String({ description: 'One line that says why the command exits the way it does.' }),
  },
  { additionalProperties: false },
);
export type RunReport = Static<typeof RunReport>;

/** `testrun run --no-wait --json`: what was enqueued, without waiting. */
export const EnqueuedReport = Type.Object(
  { ...enqueued, status: Type.Literal('queued'), exitCode: Type.Literal(CLI_EXIT_CODES.passed) },
  { additionalProperties: false },
);
export type EnqueuedReport = Static<typeof EnqueuedReport>;

/** Either command, when the API refused or could not be reached. */
export const FailureReport = Type.Object(
  {
    status: Type.Literal('error'),
    exitCode: Type.Literal(CLI_EXIT_CODES.error),
    message: Type.String(),
    error: Type.Union([
      Type.Object(
        {
          kind: Type.Literal('api'),
          status: Type.Integer(),
          code: StringEnum([...PROBLEM_CODES, 'unexpected_response'] as const),
          detail: Type.String(),
          errors: Type.Array(ProblemFieldError),
        },
        { additionalProperties: false },
      ),
      Type.Object({ kind: Type.Literal('network'), detail: Type.String() }, { additionalProperties: false }),
    ]),
  },
  { additionalProperties: false },
);
export type FailureReport = Static<typeof FailureReport>;

/** Every document `testrun run --json` may print. */
export const CliRunOutput = Type.Union([RunReport, EnqueuedReport, FailureReport]);
export type CliRunOutput = Static<typeof CliRunOutput>;

/** `testrun status --json` of a run: the API's Run plus its view link and the exit code. */
export const RunStatusReport = Type.Composite(
  [Run, Type.Object({ viewUrl: Nullable(Type.String()), exitCode: ExitCode })],
  { additionalProperties: false },
);
export type RunStatusReport = Static<typeof RunStatusReport>;

/** `testrun status --json` of a suite run: the API's SuiteRun plus the exit code. */
export const SuiteRunStatusReport = Type.Composite([SuiteRun, Type.Object({ exitCode: ExitCode })], {
  additionalProperties: false,
});
export type SuiteRunStatusReport = Static<typeof SuiteRunStatusReport>;

/** Every document `testrun status --json` may print. */
export const CliStatusOutput = Type.Union([RunStatusReport, SuiteRunStatusReport, FailureReport]);
export type CliStatusOutput = Static<typeof CliStatusOutput>;
