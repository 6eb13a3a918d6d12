import { SCREENSHOT_NAME_PATTERN, SLUG_PATTERN, TEST_KEY_PATTERN } from '@testrun/contracts';
import type { DbTx } from '../db';

// Where a step test's `expectScreenshot` keeps its baseline (docs/VISUAL.md, "Step tests"): beside
// the Playwright snapshots of the same deployment, in the same tables, under a path of its own.

/**
 * The root of step tests' baseline paths. A Playwright snapshot's path is relative to its bundle
 * (no leading `/`, docs/VISUAL.md), so no step path can ever be one, and the Playwright executor,
 * which places only paths inside the bundle, never writes one into a sandbox.
 */
const STEP_ROOT = '/steps/';

const SUITE_SLUG = new RegExp(SLUG_PATTERN);
const TEST_KEY = new RegExp(TEST_KEY_PATTERN);
const SCREENSHOT_NAME = new RegExp(SCREENSHOT_NAME_PATTERN);

/** A step test as its baselines are named: its suite's slug and its key, stable from one deployment to the next. */
export interface StepTestName {
  suiteSlug: string;
  testKey: string;
}

/**
 * The baseline path of screenshot `name` of a step test: `/steps/<suite>/<test>/<name>.png`. Each
 * part is held to the pattern the project file gives it (contracts), so none is `..` or holds a `/`;
 * throws on one that is not.
 */
export function stepBaselinePath(test: StepTestName, name: string): string {
  if (!SUITE_SLUG.test(test.suiteSlug)) throw new Error(`not a suite slug: ${JSON.stringify(test.suiteSlug)}`);
  if (!TEST_KEY.test(test.testKey)) throw new Error(`not a test key: ${JSON.stringify(test.testKey)}`);
  if (!SCREENSHOT_NAME.test(name)) throw new Error(`not a screenshot name: ${JSON.stringify(name)}`);
  return `${STEP_ROOT}${test.suiteSlug}/${test.testKey}/${name}.png`;
}

/** Whether a baseline path is a step test's (not a Playwright snapshot's). */
export function isStepBaselinePath(path: string): boolean {
  return path.startsWith(STEP_ROOT);
}

/** A run of a step test as its baselines need it: the deployment it ran (null: none) and its test's names. */
export interface StepRunScope extends StepTestName {
  deploymentId: string | null;
}

/** The deployment and the test's names of a run, in one query; null when there is no such run. */
export async function stepRunScope(db: DbTx, runId: string): Promise<StepRunScope | null> {
  const [row] = await db.$queryRaw<StepRunScope[]>`
    SELECT r.deployment_id AS "deploymentId", s.slug AS "suiteSlug", t.key AS "testKey"
    FROM runs r JOIN tests t ON t.id = r.test_id JOIN suites s ON s.id = t.suite_id
    WHERE r.id = ${runId}`;
  return row ?? null;
}
