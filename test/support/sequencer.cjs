const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The files that took longest in the last whole runs measured (docs/TESTING.md, "Speed"), longest
 * first. Each is a file to start early: one of them begun last keeps a worker busy long after the
 * other has finished.
 */
const SLOWEST = [
  'test/worker/playwright/hostile-specs.test.ts',
  'test/e2e/playwright-visual.test.ts',
  'test/e2e/playwright-tests.test.ts',
  'test/e2e/playwright-time.test.ts',
  'test/worker/playwright/outcomes.test.ts',
  'test/security/secrets-sweep.test.ts',
  'test/e2e/playwright-parity.test.ts',
  'test/e2e/playwright-visual-import.test.ts',
  'test/worker/playwright/run-ending.test.ts',
  'test/chaos/playwright-worker-killed.test.ts',
];

/**
 * Jest's own order (failed first, then the longest by the durations it cached, then the largest
 * file when it has none), except that on a run with no duration cached, a fresh clone's or CI's,
 * the files of SLOWEST go first instead of wherever their size puts them.
 */
class SlowestFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const rank = (test) =>
      test.duration == null ? SLOWEST.indexOf(path.relative(test.context.config.rootDir, test.path)) : -1;
    const early = sorted.filter((test) => rank(test) >= 0).sort((a, b) => rank(a) - rank(b));
    return [...early, ...sorted.filter((test) => rank(test) < 0)];
  }
}

module.exports = SlowestFirst;
