/**
 * One jest run over the whole repo; suites that share Postgres, Redis or Chromium are isolated by design.
 *
 * Code a test imports runs from TypeScript sources: the `@testrun/source` export condition makes
 * `@testrun/*` resolve to each package's `src/index.ts` (as it does for `tsc` through
 * tsconfig's customConditions), so a stale `dist/` never stands in for the code under test.
 * Processes a test spawns (API, worker, the `testrun` binary) run the built JavaScript, as in
 * production: globalSetup brings `dist/` up to date through turbo's cache first.
 */
const transform = {
  '^.+\\.(t|j)sx?$': [
    '@swc/jest',
    { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
  ],
};
/** What both projects share. */
const common = {
  testEnvironment: 'node',
  testEnvironmentOptions: { customExportConditions: ['@testrun/source', 'node', 'node-addons'] },
  transform,
  testPathIgnorePatterns: ['/node_modules/', '/generated/', '/dist/', '<rootDir>/test/fixtures/repos/'],
  modulePathIgnorePatterns: ['<rootDir>/apps/[^/]+/dist/', '<rootDir>/packages/[^/]+/dist/'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // TESTRUN_LEAK_REPORT=<file>: what each file leaves open, and what keeps a worker from exiting.
  setupFilesAfterEnv: [
    '<rootDir>/test/support/file-teardown.ts',
    ...(process.env.TESTRUN_LEAK_REPORT ? ['<rootDir>/test/support/leak-report.ts'] : []),
    // TESTRUN_SPAWN_LOG=<file>: every process a test file starts (test/support/spawn-cpu.cjs reads it).
    ...(process.env.TESTRUN_SPAWN_LOG ? ['<rootDir>/test/support/spawn-log.ts'] : []),
  ],
};
/*
 * Two projects, one run (jest runs a global setup named by both once): the unit tests beside the
 * code open no database (.dependency-cruiser.cjs, colocated-tests-are-unit-tests), so they skip the
 * per-file clone of the test database, a second or so each on a busy machine; the tests of test/
 * get their own database and Redis prefix (per-file-setup.ts).
 */
module.exports = {
  maxWorkers: 2,
  // A global option: jest reads it from here, not from a project's settings.
  testTimeout: 60_000,
  testSequencer: '<rootDir>/test/support/sequencer.cjs',
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{apps,packages}/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/unit-file-setup.ts'],
    },
    {
      ...common,
      displayName: 'test',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/per-file-setup.ts'],
    },
  ],
};
