import { ConfigError } from '@testrun/core/env';
import { readWorkerConfig } from './config';

const BASE = { TESTRUN_SECRET: 'x'.repeat(40) };

describe('readWorkerConfig', () => {
  it('has documented defaults', () => {
    expect(readWorkerConfig(BASE)).toMatchObject({
      concurrency: 2,
      chromiumPath: '/usr/bin/chromium',
      headlessShellPath: '/usr/lib/chromium/chromium-headless-shell',
      lockDurationMs: 30_000,
      writeRetryMs: 600_000,
      stalledIntervalMs: 30_000,
      drainTimeoutMs: 25_000,
      reconcileIntervalMs: 5_000,
      deadlineGraceMs: 30_000,
      retention: { artifactDays: 30, runDays: 90 },
      video: 'auto',
      redisPrefix: 'testrun',
      limits: {
        heapBytes: 256 * 1024 * 1024,
        maxPages: 20,
        maxDialogs: 50,
        maxRecordingBytes: 50 * 1024 * 1024,
        maxAttachments: 50,
      },
      http: null,
      playwrightTests: 'on',
      playwrightSandbox: 'on',
      playwrightCodeCache: 'on',
      playwrightBatchSize: 100,
      playwrightBundleCacheBytes: 2048 * 1024 * 1024,
      playwrightVersionsDir: expect.stringMatching(/\/\.cache\/playwright-versions$/) as unknown,
    });
  });

  it('runs tenant code unsandboxed only when PLAYWRIGHT_SANDBOX=off says so; batches of 1 to 1000', () => {
    expect(readWorkerConfig({ ...BASE, PLAYWRIGHT_SANDBOX: 'off' }).playwrightSandbox).toBe('off');
    expect(() => readWorkerConfig({ ...BASE, PLAYWRIGHT_SANDBOX: 'no' })).toThrow(ConfigError);
    expect(readWorkerConfig({ ...BASE, PLAYWRIGHT_CODE_CACHE: 'off' }).playwrightCodeCache).toBe('off');
    expect(() => readWorkerConfig({ ...BASE, PLAYWRIGHT_CODE_CACHE: 'no' })).toThrow(ConfigError);
    expect(readWorkerConfig({ ...BASE, PLAYWRIGHT_BATCH_SIZE: '1' }).playwrightBatchSize).toBe(1);
    expect(() => readWorkerConfig({ ...BASE, PLAYWRIGHT_BATCH_SIZE: '0' })).toThrow(ConfigError);
    expect(readWorkerConfig({ ...BASE, PLAYWRIGHT_BUNDLE_CACHE_MB: '512' }).playwrightBundleCacheBytes).toBe(512 << 20);
    // Less than one bundle at the caps would take.
    expect(() => readWorkerConfig({ ...BASE, PLAYWRIGHT_BUNDLE_CACHE_MB: '100' })).toThrow(ConfigError);
  });

  it("caps a sandbox's cores only when SANDBOX_CPU_CORES says so", () => {
    expect(readWorkerConfig(BASE).sandboxCpuCores).toBeUndefined();
    expect(readWorkerConfig({ ...BASE, SANDBOX_CPU_CORES: '1' }).sandboxCpuCores).toBe(1);
    expect(() => readWorkerConfig({ ...BASE, SANDBOX_CPU_CORES: '0' })).toThrow(ConfigError);
    expect(() => readWorkerConfig({ ...BASE, SANDBOX_CPU_CORES: '0.5' })).toThrow(ConfigError);
  });

  it('runs the headless shell unless CHROMIUM_HEADLESS_SHELL_PATH=off', () => {
    expect(readWorkerConfig({ ...BASE, CHROMIUM_HEADLESS_SHELL_PATH: 'off' }).headlessShellPath).toBeNull();
    expect(readWorkerConfig({ ...BASE, CHROMIUM_HEADLESS_SHELL_PATH: '/opt/shell' }).headlessShellPath).toBe(
      '/opt/shell',
    );
  });

  it('opens the HTTP server only when WORKER_HTTP_PORT is set', () => {
    expect(readWorkerConfig({ ...BASE, WORKER_HTTP_PORT: '9464' }).http).toEqual({ port: 9464, host: '0.0.0.0' });
    expect(readWorkerConfig({ ...BASE, WORKER_HTTP_PORT: '0', WORKER_HTTP_HOST: '127.0.0.1' }).http).toEqual({
      port: 0,
      host: '127.0.0.1',
    });
    expect(() => readWorkerConfig({ ...BASE, WORKER_HTTP_PORT: '70000' })).toThrow(
      'WORKER_HTTP_PORT must be between 0 and 65535, got 70000',
    );
  });

  it('reads the run limits in whole megabytes and counts', () => {
    const env = { WORKER_PAGE_HEAP_MB: '64', WORKER_MAX_PAGES: '3', WORKER_RECORDING_MAX_MB: '2' };
    expect(readWorkerConfig({ ...BASE, ...env }).limits).toEqual({
      heapBytes: 64 * 1024 * 1024,
      maxPages: 3,
      maxDialogs: 50,
      maxRecordingBytes: 2 * 1024 * 1024,
      maxAttachments: 50,
    });
  });

  it.each([
    ['WORKER_CONCURRENCY', 'two', /WORKER_CONCURRENCY must be a whole number/],
    ['WORKER_CONCURRENCY', '0', /WORKER_CONCURRENCY must be between 1 and 64/],
    ['CHROMIUM_PATH', 'chromium', /CHROMIUM_PATH must be an absolute path/],
    ['CHROMIUM_HEADLESS_SHELL_PATH', 'shell', /CHROMIUM_HEADLESS_SHELL_PATH must be an absolute path or off/],
    ['WORKER_VIDEO', 'maybe', /WORKER_VIDEO must be one of auto, on, off/],
    ['WORKER_MAX_PAGES', '0', /WORKER_MAX_PAGES must be between 1 and 1000/],
    ['RUN_RETENTION_DAYS', '0', /RUN_RETENTION_DAYS must be between 1 and 36500/],
    ['REDIS_URL', 'http://x', /REDIS_URL must be a redis or rediss URL/],
    ['TARGET_ALLOW', '10.0.0.0/33', /TARGET_ALLOW: "10.0.0.0\/33" has a prefix length/],
    ['TARGET_DENY', 'http://internal.example', /TARGET_DENY: "http:\/\/internal.example" is a URL/],
  ])('refuses a bad %s, naming it', (name, value, message) => {
    expect(() => readWorkerConfig({ ...BASE, [name]: value })).toThrow(ConfigError);
    expect(() => readWorkerConfig({ ...BASE, [name]: value })).toThrow(message);
  });

  it("reads the target rules and protects the deployment's own services", () => {
    const config = readWorkerConfig({
      ...BASE,
      TARGET_ALLOW: '127.0.0.1/32, *.staging.example',
      TARGET_DENY: '127.0.0.2',
      DATABASE_URL: 'postgresql://u@127.0.0.1:6543/db',
      REDIS_URL: 'redis://localhost:6390',
      PUBLIC_BASE_URL: 'http://api.example:8080',
    });
    expect(config.targetPolicy.allow.map((rule) => rule.text)).toEqual(['127.0.0.1/32', '*.staging.example']);
    expect(config.targetPolicy.deny.map((rule) => rule.text)).toEqual(['127.0.0.2']);
    expect(config.targetPolicy.protectedEndpoints).toEqual(
      expect.arrayContaining([
        { host: '127.0.0.1', port: 6543 },
        { host: 'localhost', port: 6390 },
        { host: '127.0.0.1', port: 6390 },
        { host: 'api.example', port: 8080 },
      ]),
    );
  });

  it('stays closed by default', () => {
    const config = readWorkerConfig(BASE);
    expect(config.targetPolicy.allow).toEqual([]);
    expect(config.targetPolicy.deny).toEqual([]);
  });
});
