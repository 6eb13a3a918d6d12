import { existsSync } from 'node:fs';
import path from 'node:path';
import { runFixture, sandboxDir } from './sandbox-dir';

/*
 * The Chromium a Playwright run starts in the sandbox gets the worker's flags: without the
 * `--disable-features` the worker's own browser has, every browser context loaded the omnibox popup
 * as a renderer of its own, and a run cost twice the CPU of `playwright test` (docs/BENCHMARKS.md).
 * A team's own flags stay, its disabled features merged into the one switch Chromium reads. The
 * browser is Chromium's headless shell, as under `playwright test` (the spec checks its command line).
 */

jest.setTimeout(120_000);

const dir = sandboxDir('flags');

test("the sandbox's browser is the headless shell, with the worker's disabled features and the team's flags", async () => {
  const scratchDir = await dir.scratch();
  const [result] = await runFixture('flags', {
    configFile: 'e2e/playwright.config.js',
    scratchDir,
    tests: [
      {
        file: 'e2e/flags.spec.js',
        project: 'app',
        titlePath: ['the browser gets the service flags and the team flags'],
      },
    ],
  });
  // On a failure the diff shows the spec's own assertion that failed.
  const error = result?.errors.map((e) => e.message).join('\n') ?? '';
  expect({ status: result?.status, error }).toEqual({ status: 'passed', error: '' });
  // Chromium's fontconfig found the system's font caches (/var/cache/fontconfig, read only) valid:
  // it wrote none of its own under the sandbox's home.
  expect(existsSync('/var/cache/fontconfig')).toBe(true);
  expect(existsSync(path.join(scratchDir, 'home', '.cache', 'fontconfig'))).toBe(false);
});
