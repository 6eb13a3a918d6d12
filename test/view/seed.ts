import type { Step, ProjectFile } from '@testrun/contracts';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { createLogger } from '@testrun/core/logger';
import type { DerivedKeys } from '@testrun/core/secrets';
import { executeRun, type ContextSource, type RunExecution } from '@testrun/worker';
import { applySampleProject, createTenant, insertSuiteRuns } from '../support/harness';

/**
 * Steps against the fixture shop (test/fixtures/site.ts), by relative URL so they act on the
 * suite run's baseUrl. What each ends in is what the worker makes of it, never written here.
 */
export const STEPS = {
  home: (): Step => ({ action: 'goto', url: '/' }),
  expectHeading: (): Step => ({ action: 'expectText', selector: 'h1', text: 'Testrun Shop' }),
  fillName: (): Step => ({ action: 'fill', selector: '#name', value: 'Ada Lovelace' }),
  clickAbout: (): Step => ({ action: 'click', selector: '#about-link' }),
  /** Not on the shop's home page: the worker fails the run `element_not_found`. */
  clickSignIn: (): Step => ({ action: 'click', selector: 'text=Sign in', timeoutMs: 1_000 }),
  /** The heading says otherwise: the worker fails the run `expectation_failed`. */
  expectWelcome: (): Step => ({ action: 'expectText', selector: 'h1', text: 'Welcome to the shop', timeoutMs: 1_000 }),
  /** The page answers 500: the worker fails the run `http_error`. */
  broken: (): Step => ({ action: 'goto', url: '/broken' }),
  /** "Not yet" for the first `fails` requests of `key`, then "Ready": with a retry, the run passes flaky. */
  flaky: (key: string, fails = 1): Step => ({
    action: 'goto',
    url: `/flaky?key=${encodeURIComponent(key)}&fails=${fails}`,
  }),
  expectReady: (): Step => ({ action: 'expectText', selector: 'h1', text: 'Ready', timeoutMs: 1_000 }),
  /** Hangs past any budget: with a short test budget the worker ends the run `error`/`timeout`. */
  slow: (): Step => ({ action: 'goto', url: '/slow' }),
};

/** One test of the seeded suite. */
export type RunPlan = {
  name: string;
  steps: Step[];
  /** False makes the run `skipped` (test_disabled) at creation. Default true. */
  enabled?: boolean;
  /** The test's time budget. Default 30000 ms. */
  timeoutMs?: number;
  /** Record a video of the run too (needs Playwright's ffmpeg). Default false. */
  video?: boolean;
  /** Test attempts after a failed or error one. Default 0. */
  retries?: number;
};

export type SeededSuite = {
  workspaceId: string;
  apiKey: string;
  suiteRunId: string;
  runs: Array<{ id: string; plan: RunPlan }>;
};

/** A project of one suite whose tests are the plans given, applied through core's admin operation. */
function projectFor(slug: string, baseUrl: string, plans: RunPlan[]): ProjectFile {
  return {
    slug,
    name: `Shop ${slug}`,
    baseUrl,
    suites: [
      {
        slug: 'checkout',
        name: 'Checkout',
        tests: plans.map((plan, i) => ({
          key: `t${i + 1}`,
          name: plan.name,
          enabled: plan.enabled ?? true,
          timeoutMs: plan.timeoutMs ?? 30_000,
          ...(plan.retries === undefined ? {} : { retries: plan.retries }),
          steps: plan.steps,
        })),
      },
    ],
  };
}

/**
 * Creates a tenant, a project and a suite run with one queued (or skipped) run per plan, the way
 * the API records a suite-mode request (core's insertRuns): one transaction, counters set at creation.
 */
export async function createSuiteRun(
  db: Db,
  keys: DerivedKeys,
  plans: RunPlan[],
  /** `retries`: as a request's, the retries every run may take (default none). */
  options: { baseUrl: string; headers?: Record<string, string>; retries?: number },
): Promise<SeededSuite> {
  const tenant = await createTenant(db);
  const applied = await applySampleProject(
    db,
    tenant.workspace.id,
    projectFor(`shop-${tenant.tag}`, options.baseUrl, plans),
  );
  const [suite] = applied.suites;
  if (!suite) throw new Error('the seeded project has no suite');
  const { suiteRunId, runIds } = await insertSuiteRuns(db, tenant.workspace.id, suite.id, {
    baseUrl: options.baseUrl,
    headers: options.headers,
    headersKey: keys.headers,
    retries: options.retries,
    // The view is looked at with everything a run can keep, passing runs included.
    evidence: { trace: 'on', video: 'on', screenshots: 'on' },
  });
  if (!suiteRunId) throw new Error('no suite run was created');
  if (runIds.length !== plans.length) throw new Error(`${runIds.length} runs were created for ${plans.length} tests`);
  const runs = plans.map((plan, i) => {
    const id = runIds[i];
    if (id === undefined) throw new Error(`no run was created for test ${i + 1}`);
    return { id, plan };
  });
  return { workspaceId: tenant.workspace.id, apiKey: tenant.key, suiteRunId, runs };
}

/** What the worker's executeRun needs besides the run: the API's database, store and keys, and a browser. */
export type WorkerParts = {
  db: Db;
  store: ArtifactStore;
  keys: DerivedKeys;
  browser: ContextSource;
  scratchDir: string;
};

/**
 * Executes a run with the worker's own executeRun (real Chromium, real step rows, screenshots, trace
 * and video, the terminal state through core's state machine) and checks that it was recorded.
 */
export async function executeSeededRun(parts: WorkerParts, run: SeededSuite['runs'][number]): Promise<void> {
  const execution: RunExecution = await executeRun(
    {
      db: parts.db,
      store: parts.store,
      browser: parts.browser,
      headersKey: parts.keys.headers,
      logger: createLogger({ service: 'worker-test', level: process.env.LOG_LEVEL ?? 'error' }),
      recordVideo: run.plan.video ?? false,
      scratchDir: parts.scratchDir,
    },
    run.id,
  );
  if (execution.kind !== 'finished' || !execution.recorded)
    throw new Error(`run "${run.plan.name}" was not executed: ${JSON.stringify(execution)}`);
}

/**
 * Executes every run of a seeded suite that is queued (disabled tests were skipped at creation), all
 * at once, as a worker with a slot for each would: the runs that wait out a step's or the test's
 * time wait side by side.
 */
export async function executeSuite(parts: WorkerParts, suite: SeededSuite): Promise<void> {
  await Promise.all(suite.runs.filter((run) => run.plan.enabled !== false).map((run) => executeSeededRun(parts, run)));
}

/**
 * The suite the view tests look at: a pass (with video), a failure of an element that is not there,
 * a test out of time, a failed expectation, a disabled test and another pass.
 */
export function mixedPlans(options: { video: boolean }): RunPlan[] {
  return [
    {
      name: 'Home page loads',
      steps: [STEPS.home(), STEPS.expectHeading(), STEPS.clickAbout()],
      video: options.video,
    },
    { name: 'Sign in works', steps: [STEPS.home(), STEPS.fillName(), STEPS.clickSignIn(), STEPS.expectHeading()] },
    // A budget the home page fits in easily, even on a busy machine; the slow page never does.
    { name: 'Checkout completes', timeoutMs: 5_000, steps: [STEPS.home(), STEPS.slow(), STEPS.clickAbout()] },
    { name: 'Welcome banner shows', steps: [STEPS.home(), STEPS.expectWelcome()] },
    { name: 'Legacy coupon flow', enabled: false, steps: [STEPS.home()] },
    { name: 'Order form takes a name', steps: [STEPS.home(), STEPS.fillName()] },
  ];
}

/** How an earlier run of a test ended, for {@link recordFinishedRuns}. `flaky`: passed on its retry. */
export type EarlierOutcome = 'passed' | 'flaky' | 'failed' | 'error';

/**
 * Records an execution of a suite's tests, finished at `at`: a suite run of the suite (or loose runs, as a project-mode request makes, with `suiteRun: false`) created the way the
 * API creates one, then ended with the outcome `outcomeOf` gives each test. Its rows are written
 * directly rather than executed: only the pages a test opens need real executions.
 */
export async function recordFinishedRuns(
  db: Db,
  suite: { workspaceId: string; suiteId: string },
  options: { at: Date; outcomeOf: (position: number) => EarlierOutcome; suiteRun?: boolean },
): Promise<{ suiteRunId: string | null; runIds: string[] }> {
  const created = await insertSuiteRuns(db, suite.workspaceId, suite.suiteId, {
    baseUrl: 'http://127.0.0.1:2',
    suiteRun: options.suiteRun,
  });
  const createdAt = new Date(options.at.getTime() - 1_000);
  // A disabled test's run is skipped at creation and stays so.
  const skipped = new Set(
    (await db.run.findMany({ where: { id: { in: created.runIds }, status: 'skipped' }, select: { id: true } })).map(
      (r) => r.id,
    ),
  );
  const ended = (i: number) => !skipped.has(created.runIds[i] ?? '');
  for (const [position, id] of created.runIds.entries()) {
    if (!ended(position)) continue;
    const outcome = options.outcomeOf(position);
    const status = outcome === 'flaky' ? 'passed' : outcome;
    await db.run.update({
      where: { id },
      data: {
        status,
        retries: outcome === 'flaky' ? 1 : 0,
        retry: outcome === 'flaky' ? 1 : 0,
        attempt: outcome === 'flaky' ? 2 : 1,
        outcomeCode: status === 'failed' ? 'expectation_failed' : status === 'error' ? 'timeout' : null,
        resultSummary: `Recorded as ${outcome}`,
        createdAt,
        startedAt: createdAt,
        finishedAt: options.at,
        durationMs: 1_000,
      },
    });
  }
  if (created.suiteRunId) {
    const count = (s: EarlierOutcome[]) =>
      created.runIds.filter((_, i) => ended(i) && s.includes(options.outcomeOf(i))).length;
    const counts = {
      passedCount: count(['passed', 'flaky']),
      failedCount: count(['failed']),
      errorCount: count(['error']),
    };
    await db.suiteRun.update({
      where: { id: created.suiteRunId },
      data: {
        ...counts,
        queuedCount: 0,
        status: counts.failedCount ? 'failed' : counts.errorCount ? 'error' : 'passed',
        createdAt,
        startedAt: createdAt,
        finishedAt: options.at,
      },
    });
  }
  return { suiteRunId: created.suiteRunId, runIds: created.runIds };
}
