import { ConfigError } from '@testrun/core';
import { readWorkerConfig } from './config';
import { findDefinitionProblem } from './execute-run';

const BASE = { TESTRUN_SECRET: 'x'.repeat(40) };

describe('readWorkerConfig', () => {
  it('has documented defaults', () => {
    expect(readWorkerConfig(BASE)).toMatchObject({
      concurrency: 2,
      chromiumPath: '/usr/bin/chromium',
      lockDurationMs: 30_000,
      stalledIntervalMs: 30_000,
      drainTimeoutMs: 25_000,
      reconcileIntervalMs: 5_000,
      deadlineGraceMs: 30_000,
      video: 'auto',
      redisPrefix: 'testrun',
    });
  });

  it.each([
    ['WORKER_CONCURRENCY', 'two', /WORKER_CONCURRENCY must be a whole number/],
    ['WORKER_CONCURRENCY', '0', /WORKER_CONCURRENCY must be between 1 and 64/],
    ['CHROMIUM_PATH', 'chromium', /CHROMIUM_PATH must be an absolute path/],
    ['WORKER_VIDEO', 'maybe', /WORKER_VIDEO must be one of auto, on, off/],
    ['REDIS_URL', 'http://x', /REDIS_URL must be a redis or rediss URL/],
  ])('refuses a bad %s, naming it', (name, value, message) => {
    expect(() => readWorkerConfig({ ...BASE, [name]: value })).toThrow(ConfigError);
    expect(() => readWorkerConfig({ ...BASE, [name]: value })).toThrow(message);
  });
});

describe('findDefinitionProblem', () => {
  it('accepts valid steps and names the first invalid one', () => {
    expect(findDefinitionProblem([{ action: 'goto', url: '/' }])).toBeNull();
    expect(findDefinitionProblem([])).toBe('the test has no steps');
    expect(findDefinitionProblem([{ action: 'goto', url: '/' }, { action: 'click' }])).toBe(
      'step 2 (selector): is required',
    );
    expect(findDefinitionProblem([{ action: 'fly' }])).toMatch(/^step 1 \(action\): must be one of/);
  });
});
