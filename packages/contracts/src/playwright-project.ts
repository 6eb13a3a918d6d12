import { Type, type Static } from '@sinclair/typebox';
import type { ProblemFieldError } from './problems';

// The Playwright side of a project file (docs/PROJECT_FILE.md, "Playwright tests"): the top-level
// `playwright:` section naming the team's config, and a suite's selector of its tests.

const Glob = Type.String({ minLength: 1, maxLength: 1_000, description: 'A glob, relative to the project file.' });
const RelativePath = Type.String({
  minLength: 1,
  maxLength: 1_000,
  pattern: '^(?![/\\\\])(?![A-Za-z]:)',
  description: 'A path relative to the project file.',
});

/** The top-level `playwright:` section: the team's Playwright Test config, extra files to bundle and files to leave out. */
export const PlaywrightSection = Type.Object(
  {
    config: RelativePath,
    include: Type.Optional(
      Type.Array(Glob, { maxItems: 100, description: 'More files to bundle (globs relative to the project file).' }),
    ),
    exclude: Type.Optional(
      Type.Array(Glob, {
        maxItems: 100,
        description:
          'Files to leave out of the bundle, and not follow (globs relative to the project file; `node_modules/<name>` for a package).',
      }),
    ),
    versionMismatch: Type.Optional(
      Type.Union([Type.Literal('warn'), Type.Literal('refuse')], {
        description:
          "When the bundle's @playwright/test major.minor is not the service's: `warn` (the default) deploys with a warning, `refuse` refuses the deploy.",
      }),
    ),
    importBaselines: Type.Optional(
      Type.Union([Type.Boolean(), Type.Array(Glob, { minItems: 1, maxItems: 100 })], {
        description:
          "The team's committed snapshots become the deployment's baselines (docs/VISUAL.md, \"Importing committed baselines\"): `true` packs and imports the `<test file>-snapshots` folders of the config's test files, a list of globs those and the files the globs match (`.png`, `.jpg`, `.jpeg`, `.txt`, never under node_modules).",
      }),
    ),
    missingBaselines: Type.Optional(
      Type.Union([Type.Literal('pass'), Type.Literal('fail')], {
        description:
          'A snapshot with no baseline yet: `pass` (the default) keeps the image as a baseline awaiting approval and the test passes; `fail` keeps it too and fails the test (`expectation_failed`), as `playwright test` does.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PlaywrightSection = Static<typeof PlaywrightSection>;

/**
 * Caps of the baselines a deployment imports from its bundle (`playwright.importBaselines`): those
 * a sandbox is given (docs/VISUAL.md, "Storage"), and an image no larger than the worker's default
 * recording limit, the largest a run keeps of an image it took. The CLI refuses to pack past them
 * and the API to deploy.
 */
export const BASELINE_IMPORT_LIMITS = {
  maxFiles: 5_000,
  maxBytes: 256 * 1024 * 1024,
  maxFileBytes: 50 * 1024 * 1024,
} as const;
export type BaselineImportLimits = { readonly [K in keyof typeof BASELINE_IMPORT_LIMITS]: number };

/** The extensions of snapshot files the service keeps as baselines (never code or configuration). */
const SNAPSHOT_FILE = /\.(png|jpe?g|txt)$/i;

/**
 * Whether a bundle path (relative, forward slashes) can be a committed baseline: a `.png`, `.jpg`,
 * `.jpeg` or `.txt` file, not under `node_modules`, without `.` or `..` parts, NUL, backslash or
 * line breaks, at most 1,024 characters (the worker places a baseline at such a path only).
 */
export function isSnapshotFile(file: string): boolean {
  const parts = file.split('/');
  return (
    SNAPSHOT_FILE.test(file) &&
    file.length <= 1_024 &&
    !/[\0\r\n\\]/.test(file) &&
    !parts.some((part) => part === '' || part === '.' || part === '..' || part === 'node_modules')
  );
}

/**
 * Which Playwright tests a suite runs: tests whose title path or tags match `grep` (and not
 * `grepInvert`), in files matching `files`, of the config's project `project`. Every criterion
 * given must hold; `{}` selects every test.
 */
export const PlaywrightSelector = Type.Object(
  {
    grep: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1_000, description: 'A JavaScript regular expression source.' }),
    ),
    grepInvert: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1_000, description: 'A JavaScript regular expression source.' }),
    ),
    files: Type.Optional(Type.Array(Glob, { minItems: 1, maxItems: 100 })),
    project: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A project of the config.' })),
  },
  { additionalProperties: false },
);
export type PlaywrightSelector = Static<typeof PlaywrightSelector>;

type SuiteShape = { slug: string; tests?: unknown[]; playwright?: PlaywrightSelector };

/**
 * What the schema cannot say about the Playwright parts of a file: a suite holds exactly one of
 * `tests` or `playwright` (an empty `tests` beside `playwright` is no step test, which is how a
 * validated file, whose suites all have `tests`, is read again), a `playwright` suite needs the
 * top-level section, `grep` and `grepInvert` compile.
 */
export function playwrightErrors(file: { playwright?: PlaywrightSection; suites: SuiteShape[] }): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  file.suites.forEach((suite, s) => {
    const at = `/suites/${s}`;
    const hasTests = suite.tests !== undefined && (suite.playwright === undefined || suite.tests.length > 0);
    if (hasTests === (suite.playwright !== undefined))
      errors.push({ path: at, message: 'must have exactly one of tests or playwright' });
    if (suite.playwright === undefined) return;
    if (file.playwright === undefined)
      errors.push({
        path: `${at}/playwright`,
        message: 'selects Playwright tests, so the file needs a top-level playwright section (its config)',
      });
    for (const field of ['grep', 'grepInvert'] as const) {
      const source = suite.playwright[field];
      if (source === undefined) continue;
      try {
        new RegExp(source);
      } catch (e) {
        errors.push({
          path: `${at}/playwright/${field}`,
          message: `is not a valid regular expression (${(e as Error).message})`,
        });
      }
    }
  });
  return errors;
}

/** Whether deploying the file needs a bundle: it has a `playwright:` section. */
export function needsBundle(file: unknown): boolean {
  return typeof file === 'object' && file !== null && 'playwright' in file && file.playwright !== undefined;
}
