import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runPlaywrightTests } from '../../../apps/worker/src/executors/playwright';
import { checkSandboxSupport } from '../../../apps/worker/src/sandbox';

/*
 * What the sandboxed Playwright tests set up alike: a directory of the test file's own, made once the
 * sandbox is known to work here (a test that needs it fails on a machine without it, never skips),
 * and runs of the fixture bundles under test/fixtures/playwright.
 */

interface SandboxDir {
  /** The test file's directory (set before its first test). */
  base: () => string;
  /** A new scratch directory under it, one per sandbox. */
  scratch: () => Promise<string>;
}

/** Registers the hooks that make `testrun-pw-<name>-…` before the file's tests and remove it after them. */
export function sandboxDir(name: string): SandboxDir {
  let dir = '';
  beforeAll(async () => {
    expect(await checkSandboxSupport()).toBeNull();
    dir = await mkdtemp(path.join(tmpdir(), `testrun-pw-${name}-`));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  return { base: () => dir, scratch: () => mkdtemp(path.join(dir, 'scratch-')) };
}

type RunOptions = Parameters<typeof runPlaywrightTests>[0];

/**
 * Runs `options.tests` of the fixture bundle test/fixtures/playwright/<fixture> in the sandbox, with
 * no network and no evidence unless `options` says otherwise; the results in the order they ended.
 */
export function runFixture(
  fixture: string,
  options: Omit<RunOptions, 'bundleDir' | 'network' | 'evidence'> & Partial<Pick<RunOptions, 'network' | 'evidence'>>,
): ReturnType<typeof runPlaywrightTests> {
  const bundleDir = path.join(__dirname, '../../fixtures/playwright', fixture);
  return runPlaywrightTests({ network: 'none', evidence: 'off', ...options, bundleDir }, () => undefined);
}
