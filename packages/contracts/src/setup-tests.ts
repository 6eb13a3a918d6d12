import { Type, type Static } from '@sinclair/typebox';
import { Nullable, RunStatus } from './enums';
import { Instant, Milliseconds, RunError, RunFailure, TestLocation } from './run-parts';

/**
 * A setup test (a test of a Playwright project another project lists in `dependencies`) that a
 * suite run's tests depended on: it ran before them, in each sandbox that ran them, and is not a run
 * of the suite run (it counts in none of its counters). One entry per setup test per suite run.
 */
export const SetupTest = Type.Object(
  {
    id: Type.String({ description: "The setup test's entry in this suite run (`setup_…`)." }),
    name: Type.String({ description: "`[project] › title path`, as a dependant's `setup_failed` summary names it." }),
    status: RunStatus,
    result_summary: Type.String({ description: 'One human sentence, of the execution shown.' }),
    error: Nullable(RunError),
    failure: Type.Optional(RunFailure),
    location: TestLocation,
    duration_ms: Milliseconds("The execution shown's duration, as Playwright measured it."),
    executions: Type.Integer({
      minimum: 1,
      description:
        'How many times it ran for the suite run: once in each sandbox (batch, or run alone) that ran tests depending on it. The entry shows the first execution that failed or ended in error when one did (the one its dependants ended on), else the latest.',
    }),
    failed_executions: Type.Integer({ minimum: 0, description: 'How many of those failed or ended in error.' }),
    started_at: Instant('When the execution shown started.'),
    finished_at: Instant('When the execution shown ended.'),
  },
  { additionalProperties: false },
);
export type SetupTest = Static<typeof SetupTest>;

/** The setup test whose failure a `setup_failed` run ended on. */
export const FailedSetup = Type.Object(
  {
    id: Type.String({ description: "Its entry in the suite run's `setup_tests`." }),
    name: SetupTest.properties.name,
    status: SetupTest.properties.status,
    result_summary: SetupTest.properties.result_summary,
    location: TestLocation,
  },
  { additionalProperties: false },
);
export type FailedSetup = Static<typeof FailedSetup>;
