import { Type, type Static } from '@sinclair/typebox';
import { ARTIFACT_KINDS, Nullable, RunStatus } from './enums';
import { Instant, Milliseconds, RunError, RunFailure, TestLocation } from './run-parts';

/** A file of a setup test's shown execution: Playwright's screenshot, trace or video, or what it attached. */
export const SetupArtifact = Type.Object(
  {
    id: Type.String({
      description:
        "The artifact's id (`art_…`): the view of the suite run (its `suiteRunUrl`), or of the run outside a suite run, serves it at `<view link>/artifacts/<id>`.",
    }),
    kind: Type.Union(
      ARTIFACT_KINDS.map((kind) => Type.Literal(kind)),
      { description: "screenshot, trace or video (Playwright's own), or attachment (testInfo.attach)." },
    ),
    name: Type.String({ description: "The file's name; an attachment's is the name the test gave it (masked)." }),
    content_type: Type.String({
      description: "The media type recorded (an attachment's is the test's, never trusted for rendering).",
    }),
    size_bytes: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type SetupArtifact = Static<typeof SetupArtifact>;

/**
 * A setup test (a test of a Playwright project another project lists in `dependencies`) that a
 * suite run's tests (or a run outside a suite run) depended on: it ran before them, in each sandbox
 * that ran them, and is not a run of the suite run (it counts in none of its counters). One entry per
 * setup test per suite run (or per run outside a suite run).
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
    artifacts: Type.Optional(
      Type.Array(SetupArtifact, {
        description:
          "The evidence of the execution shown, as a run's is kept (its evidence policy, caps and masking): Playwright's screenshot, trace and video (`kind` screenshot, trace, video) and what the setup test attached (`attachment`), oldest first; absent when none was kept, and once retention deleted them.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type SetupTest = Static<typeof SetupTest>;

/** The setup test whose failure a `setup_failed` run ended on. */
export const FailedSetup = Type.Object(
  {
    id: Type.String({
      description: "Its entry in the suite run's `setup_tests` (a run outside a suite run: the run's own).",
    }),
    name: SetupTest.properties.name,
    status: SetupTest.properties.status,
    result_summary: SetupTest.properties.result_summary,
    location: TestLocation,
  },
  { additionalProperties: false },
);
export type FailedSetup = Static<typeof FailedSetup>;
