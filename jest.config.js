/** One jest run over the whole repo; suites that share Postgres, Redis or Chromium are isolated by design. */
const transform = {
  '^.+\\.(t|j)sx?$': [
    '@swc/jest',
    { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
  ],
};
module.exports = {
  testEnvironment: 'node',
  transform,
  testMatch: ['<rootDir>/{apps,packages,test}/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/generated/'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/per-file-setup.ts'],
  testTimeout: 60_000,
  maxWorkers: 2,
};
