import { realpathSync } from 'node:fs';
import path from 'node:path';
import { checkSandboxSupport, DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS } from '../../../apps/worker/src/sandbox';
import { report, sandboxHarness, type Harness } from './sandbox-harness';

/*
 * The sandbox holds what a Playwright run needs: Node, the service's playwright-core mounted
 * read-only at /node_modules/playwright-core, and Debian's Chromium started headless by it, as a
 * user of its own, within DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS and a scratch quota.
 */

jest.setTimeout(120_000);

const PLAYWRIGHT_CORE = realpathSync(
  path.dirname(
    require.resolve('playwright-core/package.json', { paths: [path.resolve(__dirname, '../../../apps/worker')] }),
  ),
);
const PROGRAM = path.resolve(__dirname, '../../fixtures/sandbox/chromium-page.js');

let harness: Harness;

beforeAll(async () => {
  expect(await checkSandboxSupport()).toBeNull();
  harness = await sandboxHarness();
});

afterAll(() => harness.close());

test.each([
  ['with --disable-dev-shm-usage (shared memory in /tmp)', ['--disable-dev-shm-usage']],
  ["with its shared memory in the sandbox's /dev/shm", []],
])('Chromium starts headless and renders a page inside, %s', async (_name, switches) => {
  const { scratchBytes, ...limits } = DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS;
  const result = await harness.runProgram(PROGRAM, [JSON.stringify(switches)], {
    limits: { ...limits, wallMs: 60_000 },
    scratchBytes,
    env: { HOME: '/tmp' },
    readOnlyMounts: [{ from: PLAYWRIGHT_CORE, to: '/node_modules/playwright-core' }],
  });
  expect(result).toMatchObject({ exitCode: 0, limit: null, stderr: '' });
  expect(report(result)).toEqual({ text: 'inside the sandbox', uid: result.uid, shot: true });
  expect(result.peakMemoryBytes).toBeLessThan(DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS.memoryBytes);
});
