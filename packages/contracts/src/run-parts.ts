import { Type, type Static } from '@sinclair/typebox';
import { Nullable, RunErrorCode } from './enums';

// The parts of a run as the API gives it that its other documents (setup tests) share: runs.ts
// re-exports them.

export const RunError = Type.Object(
  {
    code: RunErrorCode,
    message: Type.String(),
    step: Nullable(Type.Integer({ minimum: 1, description: '1-based index of the step that was running.' })),
  },
  { additionalProperties: false },
);
export type RunError = Static<typeof RunError>;

/** An instant as the API gives it: RFC 3339 in UTC with milliseconds, e.g. 2026-11-22T10:15:00.123Z. */
export const Instant = (description: string) => Type.String({ format: 'date-time', description });

/** Milliseconds between a start and an end the server recorded. */
export const Milliseconds = (description: string) => Type.Integer({ minimum: 0, description });

/**
 * Where a Playwright test is declared, from the definition its run executed (the deployment's test):
 * what a report names it by, as Playwright's own reporters do. A step test has none.
 */
export const TestLocation = Type.Object(
  {
    file: Type.String({ description: "The spec file, relative to the bundle's root (posix separators)." }),
    line: Type.Integer({ minimum: 0 }),
    column: Type.Integer({ minimum: 0 }),
    titlePath: Type.Array(Type.String(), {
      description:
        "Describe titles then the test's title (no file, no project): Playwright's `titlePath()` past the file.",
    }),
    project: Type.String({ description: "The Playwright project it ran in ('' when the config has none)." }),
    rootDir: Type.Optional(
      Type.String({
        description:
          "The config's rootDir (its testDir), relative to the bundle's root, when it is not the root: Playwright's own reporters name spec files from it.",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "A Playwright test's file, line, title path and project; absent for a step test.",
  },
);
export type TestLocation = Static<typeof TestLocation>;

/** A failed run's error as its failing step recorded it (what the view shows of the failure). */
export const RunFailure = Type.Object(
  {
    message: Type.String({
      description:
        "The step's error in full: a Playwright expectation's message with its expected and received values, a step test's failure.",
    }),
    expected: Nullable(Type.String({ description: 'What a failed expectation wanted, when it says.' })),
    received: Nullable(Type.String({ description: 'What the page had, when it says.' })),
    location: Nullable(
      Type.String({ description: "Where in the test the step is (`file:line`, a Playwright step's)." }),
    ),
  },
  { additionalProperties: false },
);
export type RunFailure = Static<typeof RunFailure>;
