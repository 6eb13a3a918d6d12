import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { BUNDLE_DIGEST_PATTERN } from './bundles';
import type { PlaywrightSelector } from './playwright-project';

// Playwright tests as the service stores them (docs/PLAYWRIGHT.md): a deployment's bundle is
// discovered in a worker's sandbox, each test it lists becomes a test of the project, and its
// stored definition (the `steps` column, which holds an array for a step test) is an object
// naming the test inside the bundle.

export const PlaywrightBrowser = Type.Union([
  Type.Literal('chromium'),
  Type.Literal('firefox'),
  Type.Literal('webkit'),
]);
export type PlaywrightBrowser = Static<typeof PlaywrightBrowser>;

/** One test of a bundle, as discovery lists it (`playwright test --list` in the sandbox). */
export const DiscoveredTest = Type.Object(
  {
    /** Path of its spec file, relative to the bundle's root (posix separators). */
    file: Type.String({ minLength: 1 }),
    line: Type.Integer({ minimum: 0 }),
    column: Type.Integer({ minimum: 0 }),
    /** Describe titles then the test's title: no file, no project. */
    titlePath: Type.Array(Type.String(), { minItems: 1 }),
    /** The Playwright project it runs in ('' when the config has none). */
    project: Type.String(),
    tags: Type.Array(Type.String()),
    browser: PlaywrightBrowser,
    /** Its project is a dependency of another (a setup project): never a run of its own unless selected by project. */
    setup: Type.Boolean(),
    /**
     * Playwright may run it in a worker apart from its file's other tests (`fullyParallel` or a
     * `parallel` describe, and no serial group or beforeAll/afterAll around it); absent: false.
     */
    parallel: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type DiscoveredTest = Static<typeof DiscoveredTest>;

/**
 * What discovery answers: the tests, the projects and warnings, or why not. An `error` without a
 * `cause` is the team's config or specs not loading; `bundle`: the worker refused the bundle itself
 * (a cap of BUNDLE_LIMITS, an entry or package it may not hold); `worker`: the worker could not
 * extract it (its disk full, say), not the team's doing.
 */
export const DiscoveryResult = Type.Union([
  Type.Object(
    {
      tests: Type.Array(DiscoveredTest),
      projects: Type.Array(
        Type.Object({ name: Type.String(), dependencies: Type.Array(Type.String()), browser: PlaywrightBrowser }),
      ),
      warnings: Type.Array(Type.String()),
      /** The config's own `workers`, when a number: the most Playwright workers its suite runs get. */
      workers: Type.Optional(Type.Integer({ minimum: 1 })),
      /** The config's `rootDir` (its testDir), relative to the bundle's root, when not the root: Playwright's reporters name files from it. */
      rootDir: Type.Optional(Type.String({ minLength: 1 })),
      /** The bundle's @playwright/test and the service's, when their major.minor differ (runs use the service's). */
      versions: Type.Optional(
        Type.Object({ bundle: Type.String(), service: Type.String() }, { additionalProperties: false }),
      ),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { error: Type.String(), cause: Type.Optional(Type.Union([Type.Literal('bundle'), Type.Literal('worker')])) },
    { additionalProperties: false },
  ),
]);
export type DiscoveryResult = Static<typeof DiscoveryResult>;

/** A discovery job: ids and the bundle's digest only; the worker reads the bundle from the artifact store. */
export const DiscoveryJobPayload = Type.Object(
  {
    workspaceId: Type.String({ minLength: 1 }),
    bundle: Type.String({ pattern: BUNDLE_DIGEST_PATTERN }),
    /** The Playwright config's path inside the bundle. */
    config: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);
export type DiscoveryJobPayload = Static<typeof DiscoveryJobPayload>;

/** The definition a Playwright test stores where a step test stores its steps. */
export type PlaywrightDefinition = {
  playwright: {
    bundle: string;
    config: string;
    file: string;
    line: number;
    column: number;
    titlePath: string[];
    project: string;
    browser: PlaywrightBrowser;
    tags: string[];
    /** As discovered: a batch may take it apart from its file (docs/PLAYWRIGHT.md, "Batches"). */
    parallel?: boolean;
    /**
     * The config's `workers`, when a number: its suite runs get at most that many Playwright workers
     * in a batch, and with 1 the whole suite run is one group, run one test at a time, in order.
     */
    workers?: number;
    /** A digest of the test's own source in its file: a deployment counts the test changed when it changes. */
    source?: string;
    /** The config's rootDir relative to the bundle's root, when not the root (Discovery's `rootDir`). */
    rootDir?: string;
    /** `fail`: a snapshot without a baseline fails the test (the project file's `playwright.missingBaselines`); absent: it passes. */
    missingBaselines?: 'fail';
  };
};

/** Whether a stored definition is a Playwright test's (a step test's is an array of steps). */
export function isPlaywrightDefinition(steps: unknown): steps is PlaywrightDefinition {
  if (steps === null || typeof steps !== 'object' || Array.isArray(steps)) return false;
  const inner = (steps as { playwright?: unknown }).playwright;
  return inner !== null && typeof inner === 'object';
}

/**
 * A Playwright test's key in its project: stable while its file, Playwright project and title path
 * stay the same (so is its testId, one per project whichever suites select the test).
 */
export function playwrightTestKey(test: { file: string; project: string; titlePath: readonly string[] }): string {
  const digest = createHash('sha256')
    .update([test.file, test.project, ...test.titlePath].join('\0'))
    .digest('hex');
  return `pw-${digest.slice(0, 16)}`;
}

/** A test's name: its title path as Playwright prints it, without the file. */
export function playwrightTestName(test: Pick<DiscoveredTest, 'titlePath'>): string {
  return test.titlePath.join(' › ');
}

/**
 * The tests a suite's selector picks, in discovery order: `grep` against the title path and tags
 * (as `playwright test --grep` matches them), `files` globs against the file's path in the bundle,
 * `project` by name. A setup test (of a project others depend on) is picked only by its project.
 */
export function selectPlaywrightTests(
  selector: PlaywrightSelector,
  tests: readonly DiscoveredTest[],
  matchesGlob: (file: string, glob: string) => boolean,
): DiscoveredTest[] {
  const grep = selector.grep === undefined ? null : new RegExp(selector.grep);
  const grepInvert = selector.grepInvert === undefined ? null : new RegExp(selector.grepInvert);
  return tests.filter((test) => {
    if (selector.project !== undefined ? test.project !== selector.project : test.setup) return false;
    const title = [...test.titlePath, ...test.tags].join(' ');
    if (grep && !grep.test(title)) return false;
    if (grepInvert && grepInvert.test(title)) return false;
    if (selector.files && !selector.files.some((glob) => matchesGlob(test.file, glob))) return false;
    return true;
  });
}
