import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  playwrightTestKey,
  runPlaywrightTests,
  type PlaywrightTestResult,
  type RunPlaywrightOptions,
} from '../../../apps/worker/src/executors/playwright';
import { sandboxDir } from './sandbox-dir';

/*
 * The outcomes of tests that could not end on their own, in the real sandbox: a setup project that
 * failed, a bundle that does not load, a sandbox limit, a cancel, a browser the service lacks. None
 * of these tests needs the network (network 'none').
 */

jest.setTimeout(180_000);

const FIXTURES = path.join(__dirname, '../../fixtures/playwright');
const dir = sandboxDir('ending');

async function run(
  options: Omit<RunPlaywrightOptions, 'scratchDir'>,
): Promise<{ results: PlaywrightTestResult[]; streamed: PlaywrightTestResult[]; scratchDir: string }> {
  const streamed: PlaywrightTestResult[] = [];
  const scratchDir = await dir.scratch();
  const results = await runPlaywrightTests({ evidence: 'off', ...options, scratchDir }, (r) => streamed.push(r));
  return { results, streamed, scratchDir };
}

const spin = { file: 'e2e/outcomes.spec.js', project: 'app', titlePath: ['spins forever'] };
const outcomes = { bundleDir: path.join(FIXTURES, 'outcomes'), configFile: 'e2e/playwright.config.js' };

test('a setup project that failed: error setup_failed, naming the setup test and its failure', async () => {
  const test = { file: 'shop.spec.js', project: 'app', titlePath: ['buys a mug'] };
  const { results, streamed } = await run({
    bundleDir: path.join(FIXTURES, 'setup-fails'),
    configFile: 'playwright.config.js',
    tests: [test],
  });
  expect(streamed).toEqual(results);
  expect(results).toEqual([
    expect.objectContaining({ key: playwrightTestKey(test), status: 'error', code: 'setup_failed' }),
  ]);
  expect(results[0]?.summary).toMatch(/^Setup test "\[setup\] › log in" failed: .*the login page answers/);
});

test('a bundle that does not load: error invalid_definition naming the missing module', async () => {
  const { results } = await run({
    bundleDir: path.join(FIXTURES, 'broken'),
    configFile: 'playwright.config.js',
    tests: [{ file: 'broken.spec.js', project: '', titlePath: ['never loads'] }],
  });
  expect(results).toEqual([expect.objectContaining({ status: 'error', code: 'invalid_definition' })]);
  expect(results[0]?.summary).toContain('does-not-exist');
});

test("a test that outlives the sandbox's wall clock: error resource_limit", async () => {
  const { results } = await run({
    ...outcomes,
    tests: [spin],
    env: { SHOP_USER: 'alice' },
    limits: { wallMs: 15_000 },
  });
  expect(results).toEqual([
    expect.objectContaining({ key: playwrightTestKey(spin), status: 'error', code: 'resource_limit' }),
  ]);
  expect(results[0]?.summary).toContain('wall-clock limit');
});

test('cancel: the sandbox is killed, nothing is reported for the test that did not end', async () => {
  // Cancelled while the spinning test runs: a moment after it began (a fixed wait could cancel a
  // runner still starting on a busy machine, or wait longer than needed); at the latest after 60 s.
  const controller = new AbortController();
  const begun: string[] = [];
  const timer = setTimeout(() => controller.abort(), 60_000);
  const onBegin = (key: string) => {
    begun.push(key);
    setTimeout(() => controller.abort(), 500);
  };
  const { results } = await run({ ...outcomes, tests: [spin], signal: controller.signal, onBegin });
  clearTimeout(timer);
  expect(begun).toEqual([playwrightTestKey(spin)]);
  expect(controller.signal.aborted).toBe(true);
  expect(results).toEqual([]);
});

test('retries: the given value wins over the config, and every attempt is kept', async () => {
  const throws = { file: 'e2e/outcomes.spec.js', project: 'app', titlePath: ['throws in its own code'] };
  const { results } = await run({ ...outcomes, tests: [throws], retries: 1, env: { SHOP_USER: 'alice' } });
  expect(results).toEqual([expect.objectContaining({ status: 'error', code: 'test_code_error' })]);
  expect(results[0]?.attempts.map((a) => a.retry)).toEqual([0, 1]);
  expect(results[0]?.summary).toMatch(/boom in test code \(e2e\/outcomes\.spec\.js:\d+\)$/);
});

test('a project whose browser is not Chromium is skipped browser_unavailable without a sandbox', async () => {
  const firefox = { ...spin, project: 'firefox', browser: 'firefox' as const };
  const { results, scratchDir } = await run({ ...outcomes, tests: [firefox] });
  expect(results).toEqual([
    expect.objectContaining({ status: 'skipped', code: null, skipReason: 'browser_unavailable' }),
  ]);
  expect(existsSync(path.join(scratchDir, 'bundle'))).toBe(false);
});

test('a TypeScript config and spec load as under `playwright test`, and the variables reach the test', async () => {
  const bundleDir = await mkdtemp(path.join(dir.base(), 'ts-bundle-'));
  await mkdir(path.join(bundleDir, 'e2e'));
  await writeFile(
    path.join(bundleDir, 'e2e/playwright.config.ts'),
    "import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: '.', retries: 2 });\n",
  );
  await writeFile(
    path.join(bundleDir, 'e2e/typed.spec.ts'),
    [
      "import { expect, test } from '@playwright/test';",
      'interface Login { user: string }',
      "test.describe('typed', () => {",
      "  test('reads its variable', async () => {",
      "    const login: Login = { user: process.env.SHOP_USER ?? '' };",
      "    expect(login.user).toBe('alice');",
      '  });',
      '});',
    ].join('\n'),
  );
  const typed = { file: 'e2e/typed.spec.ts', project: '', titlePath: ['typed', 'reads its variable'] };
  const { results } = await run({
    bundleDir,
    configFile: 'e2e/playwright.config.ts',
    tests: [typed],
    env: { SHOP_USER: 'alice' },
  });
  expect(results).toEqual([expect.objectContaining({ key: playwrightTestKey(typed), status: 'passed', code: null })]);
  expect(results[0]?.attempts).toHaveLength(1);
});
