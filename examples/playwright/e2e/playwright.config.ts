import path from 'node:path';
import { defineConfig, devices } from '@playwright/test';

/** Where the setup project keeps the signed-in session the other projects start from. */
export const STORAGE_STATE = path.join(__dirname, '.auth', 'user.json');

// Playwright's own Chromium (`npx playwright install chromium`) unless CHROMIUM_PATH names another
// build, such as a distribution's /usr/bin/chromium. Under Testrun the service picks the browser.
const executablePath = process.env.CHROMIUM_PATH;

export default defineConfig({
  testDir: '.',
  fullyParallel: true,
  forbidOnly: !!process.env.CI,
  retries: process.env.CI ? 2 : 1,
  workers: process.env.CI ? 2 : undefined,
  reporter: process.env.CI ? 'dot' : 'list',
  timeout: 30_000,
  expect: { timeout: 5_000 },
  use: {
    baseURL: process.env.BASE_URL ?? 'http://127.0.0.1:4010',
    trace: 'on-first-retry',
    screenshot: 'only-on-failure',
    actionTimeout: 10_000,
    launchOptions: executablePath ? { executablePath } : {},
  },
  projects: [
    { name: 'setup', testMatch: /.*\.setup\.ts/ },
    {
      name: 'chromium',
      use: { ...devices['Desktop Chrome'], storageState: STORAGE_STATE },
      dependencies: ['setup'],
    },
    {
      name: 'mobile',
      testMatch: 'tests/catalog.spec.ts',
      use: { ...devices['Pixel 7'], storageState: STORAGE_STATE },
      dependencies: ['setup'],
    },
  ],
});
