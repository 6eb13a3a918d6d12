import { existsSync } from 'node:fs';
import type { BrowserType } from 'playwright';

/**
 * Playwright's Chromium driver, loaded when a browser is first wanted: loading Playwright takes
 * about a quarter of a second of CPU, which a worker that never launches a browser (one that only
 * runs Playwright tests, in their sandboxes) and a test that never does need not spend. Required,
 * not `import()`ed: Playwright is CommonJS, and Node's ESM loader would first scan its bundles for
 * their names (cjs-module-lexer), another third of a second of every worker's start.
 */
export function chromiumDriver(): Promise<BrowserType> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
  const { chromium } = require('playwright') as { chromium: BrowserType };
  return Promise.resolve(chromium);
}

/** Default of `CHROMIUM_PATH`: Debian's Chromium. */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Default of `CHROMIUM_HEADLESS_SHELL_PATH`: Debian's `chromium-headless-shell` binary (its
 * /usr/bin/chromium-headless-shell is a shell script that stays the browser's parent, so a signal
 * to the process Playwright started would not reach the browser). It is a build of the headless
 * shell that Playwright runs headless Chromium on (its `chromium-headless-shell` download), and
 * renders the same pages with the same engine, without the full browser's UI layers, for about a
 * third of the CPU here (docs/BENCHMARKS.md, "Headless shell").
 */
export const DEFAULT_HEADLESS_SHELL_PATH = '/usr/lib/chromium/chromium-headless-shell';

/**
 * The Chromium a launch runs, as Playwright would choose it: Playwright's own when it is installed (a
 * developer's machine after `playwright install`); else, for a headless launch, the headless shell
 * when there is one at `headlessShell`; else the configured Chromium (Debian's package here).
 */
export async function chooseExecutablePath(
  configured: string = DEFAULT_CHROMIUM_PATH,
  headlessShell: string | null = null,
): Promise<string> {
  const chromium = await chromiumDriver();
  let bundled: string | undefined;
  try {
    bundled = chromium.executablePath();
  } catch {
    // No browser registry at all: only the configured paths can work.
  }
  if (bundled && existsSync(bundled)) return bundled;
  return headlessShell !== null && existsSync(headlessShell) ? headlessShell : configured;
}
