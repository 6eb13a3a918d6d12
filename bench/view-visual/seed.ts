/**
 * The suite run `pnpm bench view-visual` looks at: RUNS Playwright runs, each failed
 * `screenshot_changed` with one changed snapshot and its expected, actual and diff PNGs in the
 * artifact store. Written the way the view tests write theirs (test/view/seed.ts creates the suite
 * run as the API does, test/view/visual-seed.ts records the changes as the worker does); then each
 * run is given the Playwright definition its deployment's test would have.
 */
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { createSuiteRun, STEPS } from '../../test/view/seed';
import type { ViewEnv } from '../../test/view/support';
import { recordVisualRuns } from '../../test/view/visual-seed';
import { BENCH_KEYS } from '../view-common';
import type { SnapshotImages } from './images';

type VisualRunPlan = Parameters<typeof recordVisualRuns>[2][number];

/** Tests per spec file, as a team's suite spreads its screenshots over its files. */
const TESTS_PER_FILE = 10;

const specFile = (i: number) => `e2e/tests/dashboard-${Math.floor(i / TESTS_PER_FILE) + 1}.spec.ts`;
const title = (i: number) => `dashboard ${i + 1} looks right`;

/** What run `i` found: its snapshot changed, with Playwright's three images of it. */
function planOf(i: number, images: SnapshotImages): VisualRunPlan {
  const name = `dashboard-${i + 1}.png`;
  const png = (role: keyof SnapshotImages) => ({
    name: `dashboard-${i + 1}-${role}.png`,
    body: images[role],
    contentType: 'image/png',
  });
  return {
    status: 'failed',
    summary: `Screenshot changed at step 3 (Expect "toHaveScreenshot(${name})"): 5123 pixels (ratio 0.01 of all image pixels) are different.`,
    snapshots: [
      {
        name,
        path: `${specFile(i)}-snapshots/dashboard-${i + 1}-chromium-linux.png`,
        kind: 'changed',
        files: [png('expected'), png('actual'), png('diff')],
      },
    ],
  };
}

/** Makes each run the Playwright test it stands for: kind, definition (file, line, title path) and name. */
async function asPlaywright(db: Db, runIds: readonly string[]): Promise<void> {
  for (const [i, id] of runIds.entries()) {
    const definition = {
      playwright: {
        bundle: 'sha256:00',
        config: 'playwright.config.ts',
        file: specFile(i),
        line: 5 + (i % TESTS_PER_FILE) * 6,
        column: 3,
        titlePath: ['dashboard', title(i)],
        project: 'chromium',
        browser: 'chromium',
        tags: [],
      },
    };
    await db.$executeRawUnsafe(
      `UPDATE runs SET kind = 'playwright', steps = $2::jsonb, test_name = $3 WHERE id = $1`,
      id,
      JSON.stringify(definition),
      `dashboard › ${title(i)}`,
    );
  }
}

/**
 * Seeds the suite run: `count` runs, run `i` attaching `images[i % images.length]` (each run's
 * files stored apart, under its own keys). Returns the suite run's and its runs' ids, and the
 * workspace (whose folder of the store holds the files).
 */
export async function seedVisualSuite(db: Db, store: ArtifactStore, images: readonly SnapshotImages[], count: number) {
  const plans = Array.from({ length: count }, (_, i) => ({ name: title(i), steps: [STEPS.home()] }));
  const suite = await createSuiteRun(db, BENCH_KEYS, plans, { baseUrl: 'http://127.0.0.1:4010' });
  // recordVisualRuns reads only the env's database and artifact store.
  const env: Pick<ViewEnv, 'db'> & { api: Pick<ViewEnv['api'], 'store'> } = { db, api: { store } };
  const visual = Array.from({ length: count }, (_, i) => {
    const set = images[i % images.length];
    if (!set) throw new Error('no images to attach');
    return planOf(i, set);
  });
  await recordVisualRuns(env as ViewEnv, suite, visual);
  const runIds = suite.runs.map((r) => r.id);
  await asPlaywright(db, runIds);
  // Statistics, as autovacuum keeps them on a live database.
  await db.$executeRawUnsafe('ANALYZE');
  return {
    workspaceId: suite.workspaceId,
    suiteRunId: suite.suiteRunId,
    runIds,
    specFiles: Math.ceil(count / TESTS_PER_FILE),
  };
}
