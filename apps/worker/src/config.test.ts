import { ConfigError } from '@testrun/core';
import { readWorkerConfig } from './config';

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
