import { aggregateStatus } from './aggregate';

describe('aggregateStatus', () => {
  it('aggregates statuses by the suite rule', () => {
    expect(aggregateStatus(['queued', 'queued'])).toBe('queued');
    expect(aggregateStatus(['passed', 'running'])).toBe('running');
    expect(aggregateStatus(['error', 'failed', 'passed'])).toBe('failed');
    expect(aggregateStatus(['error', 'skipped', 'passed'])).toBe('error');
    expect(aggregateStatus(['skipped', 'skipped'])).toBe('skipped');
    expect(aggregateStatus(['skipped', 'passed'])).toBe('passed');
  });
});
