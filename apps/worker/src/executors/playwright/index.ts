import type { JobWatch } from '../../run/executor';
import { arrivalsWatch } from './batch/arrivals';
import type { PlaywrightRuntime } from './playwright-runtime';

export { playwrightExecutor } from './playwright-executor';
export type { PlaywrightRuntime } from './playwright-runtime';
export { discoverTests, playwrightTestKey } from './runner/discover';
export { runPlaywrightTests } from './runner/invoke-tests';
export type * from './runner/types';

/** The kind of test (`runs.kind`) the Playwright executor runs. */
export const PLAYWRIGHT_KIND = 'playwright';

/** What the worker's jobs tell the Playwright batches' leaders (RunDeps.jobs). */
export function playwrightJobWatch(runtime: PlaywrightRuntime): JobWatch {
  return arrivalsWatch(runtime.arrivals, PLAYWRIGHT_KIND);
}
