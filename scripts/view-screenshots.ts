/**
 * `pnpm docs:screenshots`: the pictures of docs/VIEW.md. Seeds a small suite in a database of its
 * own, runs it with the worker's own executeRun in Chromium against the fixture shop on loopback,
 * and photographs the detailed view's pages at 1440 and 390 px into docs/images/: the suite page,
 * a failed run's page, a flaky run's page (its attempt tabs) and the screenshot viewer.
 *
 * Postgres and Redis from DATABASE_URL and REDIS_URL (default local); the database is dropped after.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL } from '@testrun/core/env';
import { dropDatabase, ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import { testTargetAllow } from '../test/support/processes';

const OUT = path.resolve(__dirname, '../docs/images');
const WIDTHS = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
] as const;

async function main(): Promise<void> {
  const tag = randomBytes(4).toString('hex');
  const base = new URL(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  base.pathname = `/testrun_shots_${tag}`;
  const databaseUrl = base.toString();
  await ensureDatabase(databaseUrl);
  // What the view's test support reads (test/support/harness.ts), set before it is loaded.
  Object.assign(process.env, {
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL || DEFAULT_REDIS_URL,
    REDIS_PREFIX: `testrun-shots-${tag}`,
    TESTRUN_SECRET: randomBytes(32).toString('hex'),
    ARTIFACTS_DIR: mkdtempSync(path.join(tmpdir(), 'testrun-shots-')),
    LOG_LEVEL: process.env.LOG_LEVEL || 'error',
    // The ports the view's seed suite's fixture servers listen on, as in the tests.
    TARGET_ALLOW: testTargetAllow(),
  });
  try {
    await migrateDatabase(databaseUrl);
    await photograph();
  } finally {
    await dropDatabase(databaseUrl).catch(() => undefined);
  }
}

/** How test `i` ended on the `k`-th of the twelve earlier nights. */
function earlierOutcome(i: number, k: number): 'passed' | 'flaky' | 'failed' | 'error' {
  if (i === 1) return k >= 9 ? 'failed' : 'passed';
  if (i === 3) return k % 3 === 0 ? 'passed' : k % 3 === 1 ? 'flaky' : 'failed';
  return i === 4 && k === 6 ? 'error' : 'passed';
}

async function photograph(): Promise<void> {
  const { createSuiteRun, executeSuite, recordFinishedRuns, STEPS } = await import('../test/view/seed');
  const { defined, openViewer, startViewEnv } = await import('../test/view/support');
  const env = await startViewEnv();
  try {
    const key = `docs-${Date.now()}`;
    const suite = await createSuiteRun(
      env.db,
      env.api.keys,
      [
        { name: 'Home page loads', steps: [STEPS.home(), STEPS.expectHeading(), STEPS.clickAbout()] },
        {
          name: 'Sign in works',
          steps: [STEPS.home(), STEPS.fillName(), STEPS.clickSignIn(), STEPS.expectHeading()],
        },
        {
          name: 'Cart total shows',
          steps: [
            { action: 'goto', url: '/noisy' },
            { action: 'expectText', selector: '#cart', text: 'Total: 3 items, 42.00 EUR', timeoutMs: 1_000 },
          ],
        },
        { name: 'Stock page settles', retries: 1, steps: [STEPS.flaky(key), STEPS.expectReady()] },
        { name: 'Checkout completes', timeoutMs: 5_000, steps: [STEPS.home(), STEPS.slow(), STEPS.clickAbout()] },
        { name: 'Legacy coupon flow', enabled: false, steps: [STEPS.home()] },
        { name: 'Order form takes a name', steps: [STEPS.home(), STEPS.fillName()] },
      ],
      { baseUrl: env.site.url },
    );
    // Twelve earlier nights of the suite, so the history strips have something to show: sign-in
    // broke three nights ago, the stock page flips.
    const target = await env.db.suiteRun.findUniqueOrThrow({
      where: { id: suite.suiteRunId },
      select: { workspaceId: true, suiteId: true },
    });
    for (let k = 0; k < 12; k++)
      await recordFinishedRuns(env.db, target, {
        at: new Date(Date.now() - (12 - k) * 86_400_000),
        outcomeOf: (i) => earlierOutcome(i, k),
      });
    process.stdout.write('executing the suite\n');
    await executeSuite(env.worker, suite);
    const viewer = await openViewer(env);
    const run = (i: number) => runViewUrl(env.api.origin, env.api.keys.view, defined(suite.runs[i], `run ${i}`).id);
    const pages: Array<[string, string, (page: Page) => Promise<void>]> = [
      ['suite', suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId), () => Promise.resolve()],
      ['run-failed', run(2), () => Promise.resolve()],
      ['run-flaky', run(3), () => Promise.resolve()],
      [
        'viewer',
        run(1),
        async (page) => {
          await page.locator('.callout-shot a.shot').click();
          await page.locator('dialog[open] img').evaluate((img: HTMLImageElement) => img.decode());
        },
      ],
    ];
    mkdirSync(OUT, { recursive: true });
    for (const size of WIDTHS) {
      await viewer.page.setViewportSize(size);
      for (const [name, url, prepare] of pages) {
        process.stdout.write(`${name} at ${size.width} px\n`);
        await viewer.page.goto(url);
        await viewer.page.locator('main[data-ready]').waitFor();
        // The images in sight (lazy ones further down never load until scrolled to).
        await viewer.page.evaluate(() =>
          Promise.all(
            [...document.images]
              .filter((i) => i.checkVisibility() && i.getBoundingClientRect().top < window.innerHeight)
              .map((i) => Promise.race([i.decode().catch(() => null), new Promise((r) => setTimeout(r, 5_000))])),
          ),
        );
        await prepare(viewer.page);
        const file = path.join(OUT, `view-${name}-${size.width}.png`);
        await viewer.page.screenshot({ path: file });
        process.stdout.write(`${path.relative(process.cwd(), file)}\n`);
      }
    }
    await viewer.context.close();
  } finally {
    await env.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
