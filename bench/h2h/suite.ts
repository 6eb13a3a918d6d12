/**
 * The same N tests written twice: as a Testrun project file and as a Playwright spec with its
 * config. Each test opens the sign-up form, fills the name, clicks submit and checks the text the
 * page shows after its client-side delay.
 */
import type { ProjectFile } from '@testrun/contracts';

/** Evidence both sides record: none, or trace + video + screenshots. */
export type EvidenceLevel = 'none' | 'all';

/** The project file holding the N tests as one suite `signup`. */
export function projectFile(n: number, baseUrl: string): ProjectFile {
  return {
    slug: 'h2h',
    name: 'Head to head',
    baseUrl,
    suites: [
      {
        slug: 'signup',
        name: 'Sign-up form',
        tests: Array.from({ length: n }, (_, i) => ({
          key: `signup-${i}`,
          name: `Sign-up ${i}`,
          steps: [
            { action: 'goto' as const, url: `/signup?n=${i}` },
            { action: 'fill' as const, selector: '#name', value: `User ${i}` },
            { action: 'click' as const, selector: '#submit' },
            { action: 'expectText' as const, selector: '#result', text: `Thanks, User ${i}` },
          ],
        })),
      },
    ],
  };
}

/** The Playwright spec (CommonJS, no transform needed) with the same N tests. */
export function playwrightSpec(n: number, baseUrl: string): string {
  const tests = Array.from(
    { length: n },
    (_, i) => `test('Sign-up ${i}', async ({ page }) => {
  await page.goto(${JSON.stringify(`${baseUrl}/signup?n=${i}`)});
  await page.locator('#name').fill('User ${i}');
  await page.locator('#submit').click();
  await expect(page.locator('#result')).toContainText('Thanks, User ${i}');
});`,
  );
  return `const { test, expect } = require('@playwright/test');\ntest.describe.configure({ mode: 'parallel' });\n${tests.join('\n')}\n`;
}

/**
 * The Playwright config: the same Chromium binary and launch flags as the worker, K workers, a JSON
 * report (to check that every test passed), and the evidence level asked for.
 */
export function playwrightConfig(options: {
  workers: number;
  executablePath: string;
  args: readonly string[];
  evidence: EvidenceLevel;
  reportFile: string;
  outputDir: string;
}): string {
  const on = options.evidence === 'all';
  const config = {
    testDir: '.',
    testMatch: '*.spec.js',
    workers: options.workers,
    fullyParallel: true,
    retries: 0,
    timeout: 30_000,
    outputDir: options.outputDir,
    reporter: [['json', { outputFile: options.reportFile }]],
    use: {
      browserName: 'chromium',
      headless: true,
      launchOptions: { executablePath: options.executablePath, args: options.args },
      trace: on ? 'on' : 'off',
      video: on ? 'on' : 'off',
      screenshot: on ? 'on' : 'off',
    },
  };
  return `module.exports = ${JSON.stringify(config, null, 2)};\n`;
}
