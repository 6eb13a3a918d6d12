/**
 * The Playwright half of `pnpm demo`: deploys examples/playwright (a team's Playwright Test project)
 * as `testrun deploy --file` does — packed into a bundle, uploaded, its tests listed by the worker in
 * its sandbox — and enqueues its suite against the fixture shop, with the shop's password as a
 * secret variable the tests read from `process.env.SHOP_PASSWORD`.
 */
import path from 'node:path';
import { deploySource } from '../packages/cli/src/ci';
import { readProjectSource } from '../packages/cli/src/client/project-source';
import type { TestrunClient } from '@testrun/client';
import { SHOP_ACCOUNT } from '../test/fixtures/shop-pages';

const PROJECT_FILE = path.resolve(__dirname, '../examples/playwright/testrun.yaml');

/** Deploys the example and enqueues its `all` suite against `siteUrl`; the suite run's id. */
export async function enqueuePlaywrightDemo(
  client: TestrunClient,
  siteUrl: string,
  out: (line: string) => void,
): Promise<string> {
  const read = readProjectSource(PROJECT_FILE);
  if (!read.ok) throw new Error(`${PROJECT_FILE}: ${read.errors.map((e) => e.message).join('; ')}`);
  const deployment = await deploySource(client, read.source, { activate: true, dryRun: false });
  const tests = 'tests' in deployment ? deployment.tests.length : 0;
  out(`Deployed examples/playwright: ${tests} Playwright tests, discovered in the worker's sandbox`);
  const enqueued = await client.enqueueSuite(read.source.slug, 'all', {
    baseUrl: siteUrl,
    secretVariables: { SHOP_PASSWORD: SHOP_ACCOUNT.password },
  });
  return enqueued.body.suiteRunId;
}
