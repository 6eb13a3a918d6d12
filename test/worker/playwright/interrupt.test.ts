import { playwrightTestKey } from '../../../apps/worker/src/executors/playwright';
import { interruptTest, makeControlDir } from '../../../apps/worker/src/executors/playwright/runner/interrupt';
import { runFixture, sandboxDir } from './sandbox-dir';

/*
 * One test of a sandbox stopped while the others carry on (a cancelled run of a batch,
 * interrupt.ts): the worker names it in the control directory, the sandbox's Playwright worker
 * running it ends itself, and the runner goes on with the next test.
 */

jest.setTimeout(120_000);

const dir = sandboxDir('interrupt');

test('a test the worker names stops at once; the next test of the sandbox runs and passes', async () => {
  const long = { file: 'e2e/interrupt.spec.js', project: 'app', titlePath: ['checkout', 'waits a long time'] };
  const after = { file: 'e2e/interrupt.spec.js', project: 'app', titlePath: ['runs after it'] };
  const control = await makeControlDir(dir.base());
  try {
    const results = await runFixture('interrupt', {
      configFile: 'e2e/playwright.config.js',
      scratchDir: await dir.scratch(),
      controlDir: control.dir,
      tests: [long, after],
      onBegin: (key) => {
        if (key === playwrightTestKey(long)) void interruptTest(control.dir, long);
      },
    });
    const byKey = new Map(results.map((r) => [r.key, r]));
    // Left alone, the long test passes after a minute; stopped, its worker is gone.
    const stopped = byKey.get(playwrightTestKey(long));
    expect(stopped?.status).not.toBe('passed');
    expect(stopped?.errors.map((e) => e.message).join('\n')).toMatch(/worker process exited unexpectedly/i);
    expect(byKey.get(playwrightTestKey(after))?.status).toBe('passed');
  } finally {
    await control.remove();
  }
});
