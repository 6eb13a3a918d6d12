import { deriveSuiteStatus, type SuiteCounts } from './run-state';

const counts = (c: Partial<SuiteCounts>): SuiteCounts => ({
  total: 3,
  queued: 0,
  running: 0,
  passed: 0,
  failed: 0,
  error: 0,
  skipped: 0,
  ...c,
});

describe('deriveSuiteStatus', () => {
  it.each([
    [{ queued: 3 }, 'queued'],
    [{ queued: 2, running: 1 }, 'running'],
    [{ queued: 2, skipped: 1 }, 'queued'],
    [{ queued: 1, skipped: 1, error: 1 }, 'running'],
    [{ queued: 2, passed: 1 }, 'running'],
    [{ running: 1, failed: 2 }, 'running'],
    [{ passed: 2, failed: 1 }, 'failed'],
    [{ failed: 1, error: 2 }, 'failed'],
    [{ passed: 1, error: 1, skipped: 1 }, 'error'],
    [{ skipped: 3 }, 'skipped'],
    [{ passed: 2, skipped: 1 }, 'passed'],
    [{ passed: 3 }, 'passed'],
  ] as const)('%j gives %s', (c, expected) => {
    expect(deriveSuiteStatus(counts(c))).toBe(expected);
  });
});
