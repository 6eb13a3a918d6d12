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
module.exports = {
  testEnvironment: 'node',
  testEnvironmentOptions: { customExportConditions: ['@testrun/source', 'node', 'node-addons'] },
  transform,
  testMatch: ['<rootDir>/{apps,packages,test}/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/generated/', '/dist/', '<rootDir>/test/fixtures/repos/'],
  modulePathIgnorePatterns: ['<rootDir>/apps/[^/]+/dist/', '<rootDir>/packages/[^/]+/dist/'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/per-file-setup.ts'],
  testTimeout: 60_000,
  maxWorkers: 2,
};
