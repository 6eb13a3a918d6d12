import { countStatuses, type RunStatus } from '@testrun/contracts';
import { deriveSuiteStatus } from './state';

describe('deriveSuiteStatus', () => {
  it.each<[RunStatus[], RunStatus]>([
    [['queued'], 'queued'],
    [['queued', 'running'], 'running'],
    [['queued', 'queued', 'skipped'], 'queued'],
    [['queued', 'skipped', 'error'], 'running'],
    [['queued', 'passed'], 'running'],
    [['running', 'failed', 'failed'], 'running'],
    [['passed', 'failed'], 'failed'],
    [['failed', 'error', 'error', 'passed'], 'failed'],
    [['passed', 'error', 'skipped'], 'error'],
    [['skipped', 'skipped'], 'skipped'],
    [['passed', 'passed', 'skipped'], 'passed'],
    [['passed'], 'passed'],
  ])('%j gives %s', (children, expected) => {
    expect(deriveSuiteStatus(countStatuses(children))).toBe(expected);
  });
});

describe('countStatuses', () => {
  it('counts each child under its status', () => {
    expect(countStatuses(['passed', 'error', 'passed'])).toEqual({
      total: 3,
      queued: 0,
      running: 0,
      passed: 2,
      failed: 0,
      error: 1,
      skipped: 0,
    });
  });
});
