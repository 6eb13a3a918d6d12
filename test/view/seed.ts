import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
  artifactKey,
  finishRun,
  ID_PREFIX,
  newId,
  startRun,
  type ArtifactStore,
  type Db,
  type DerivedKeys,
  type RunOutcome,
} from '@testrun/core';
import type { ProjectFile, StepAction } from '@testrun/contracts';
import { applySampleProject, createTenant, insertSuiteRuns } from '../support/harness';

/** The page the seeded tests act on: a small shop, served as a data: URL so no server is needed. */
export const SHOP_PAGE = `data:text/html,${encodeURIComponent(`<!doctype html><html><head><title>Shop</title>
<style>body{font-family:sans-serif;margin:0}header{background:#24292f;color:#fff;padding:16px 24px}h1{margin:0}
main{padding:24px}.card{display:inline-block;border:1px solid #ccc;border-radius:8px;padding:16px;margin:8px;width:160px;background:#fafbfc}
button{background:#2da44e;color:#fff;border:0;border-radius:6px;padding:8px 14px}</style></head>
<body><header><h1>Shop</h1></header><main><a href="#products">Products</a><form><label>Email <input id="email"></label></form>
<div class="card">Red mug<br><button>Add</button></div><div class="card">Blue cap<br><button>Add</button></div></main></body></html>`)}`;

type StepPlan = {
  action: StepAction;
  label: string;
  target: string;
  fails?: { outcome: 'failed' | 'error'; error: string };
  act: (page: Page) => Promise<unknown>;
};

/** What a seeded test does when it runs; `null` leaves the run queued (or skipped when disabled). */
export type RunPlan = {
  name: string;
  enabled?: boolean;
  steps: StepPlan[];
  outcome?: RunOutcome;
  /** Record a video too (needs ffmpeg where Playwright looks for it). */
  video?: boolean;
};

export const STEPS = {
  goto: (): StepPlan => ({
    action: 'goto',
    label: 'goto "/"',
    target: 'http://127.0.0.1:4010/',
    act: (p) => p.goto(SHOP_PAGE),
  }),
  expectTitle: (): StepPlan => ({
    action: 'expectText',
    label: 'expectText "h1" "Shop"',
    target: 'h1',
    act: (p) => p.locator('h1').textContent(),
  }),
  fill: (): StepPlan => ({
    action: 'fill',
    label: 'fill "#email"',
    target: '#email',
    act: (p) => p.fill('#email', 'someone@example.test'),
  }),
  clickProducts: (): StepPlan => ({
    action: 'click',
    label: 'click "text=Products"',
    target: 'text=Products',
    act: (p) => p.click('text=Products'),
  }),
  clickMissing: (): StepPlan => ({
    action: 'click',
    label: 'click "text=Sign in"',
    target: 'text=Sign in',
    fails: { outcome: 'failed', error: 'element "text=Sign in" not found within 1 s' },
    act: (p) => p.click('text=Sign in', { timeout: 300 }).catch(() => undefined),
  }),
  slow: (): StepPlan => ({
    action: 'waitFor',
    label: 'waitFor ".checkout"',
    target: '.checkout',
    fails: { outcome: 'error', error: 'the test time budget of 1 s ran out during this step' },
    act: (p) => p.waitForSelector('.checkout', { timeout: 300 }).catch(() => undefined),
  }),
};

export type SeededSuite = {
  workspaceId: string;
  apiKey: string;
  suiteRunId: string;
  runs: Array<{ id: string; name: string }>;
};

/** A project of one suite whose tests are the plans given, applied through core's admin operation. */
function projectFor(slug: string, plans: RunPlan[]): ProjectFile {
  return {
    slug,
    name: `Shop ${slug}`,
    baseUrl: 'http://127.0.0.1:4010',
    suites: [
      {
        slug: 'checkout',
        name: 'Checkout',
        tests: plans.map((plan, i) => ({
          key: `t${i + 1}`,
          name: plan.name,
          enabled: plan.enabled ?? true,
          timeoutMs: 30_000,
          steps: plan.steps.length
            ? plan.steps.map(() => ({ action: 'goto' as const, url: '/' }))
            : [{ action: 'goto' as const, url: '/' }],
        })),
      },
    ],
  };
}

/**
 * Creates a tenant, a project and a suite run with one queued (or skipped) run per plan, the way
 * the API records a suite-mode request: one transaction, counters set at creation.
 */
export async function createSuiteRun(
  db: Db,
  keys: DerivedKeys,
  plans: RunPlan[],
  options: { baseUrl?: string; headers?: Record<string, string> } = {},
): Promise<SeededSuite> {
  const tenant = await createTenant(db);
  const applied = await applySampleProject(db, tenant.workspace.id, projectFor(`shop-${tenant.tag}`, plans));
  const [suite] = applied.suites;
  if (!suite) throw new Error('the seeded project has no suite');
  const { suiteRunId, runIds } = await insertSuiteRuns(db, tenant.workspace.id, suite.id, {
    baseUrl: options.baseUrl ?? 'http://127.0.0.1:4010',
    headers: options.headers,
    headersKey: keys.headers,
  });
  if (!suiteRunId) throw new Error('no suite run was created');
  const runs = runIds.map((id: string, i: number) => ({ id, name: plans[i]?.name ?? '' }));
  return {
    workspaceId: tenant.workspace.id,
    apiKey: tenant.key,
    suiteRunId,
    runs,
  };
}

/**
 * Executes a plan the way a worker would, with real Chromium: claims the run, performs each step,
 * takes a screenshot per step, records a Playwright trace (and a video when asked), stores them in
 * the artifact store with their rows, and writes the terminal status through core's state machine.
 */
export async function executeRun(
  db: Db,
  store: ArtifactStore,
  browser: Browser,
  workspaceId: string,
  runId: string,
  plan: RunPlan,
): Promise<void> {
  const claimed = await startRun(db, runId, 2);
  if (!claimed) throw new Error(`run ${runId} could not be started`);
  const attempt = claimed.attempt;
  const videoDir = plan.video ? await mkdtemp(path.join(tmpdir(), 'testrun-video-')) : null;
  const context = await browser.newContext({
    viewport: { width: 800, height: 500 },
    ...(videoDir ? { recordVideo: { dir: videoDir, size: { width: 800, height: 500 } } } : {}),
  });
  await context.tracing.start({ screenshots: true, snapshots: true });
  const page = await context.newPage();
  const put = async (
    kind: 'screenshot' | 'trace' | 'video',
    name: string,
    contentType: string,
    body: Buffer,
    stepIndex: number | null,
  ) => {
    const id = newId(ID_PREFIX.artifact);
    const storageKey = artifactKey(workspaceId, runId, id, name);
    await store.put(storageKey, body);
    await db.artifact.create({
      data: { id, runId, workspaceId, attempt, kind, stepIndex, name, storageKey, contentType, sizeBytes: body.length },
    });
    return id;
  };
  try {
    for (const [i, step] of plan.steps.entries()) {
      const startedAt = new Date();
      await step.act(page);
      const durationMs = Date.now() - startedAt.getTime();
      const shot = await page.screenshot({ type: 'jpeg', quality: 70 });
      const screenshotId = await put('screenshot', `step-${i + 1}.jpg`, 'image/jpeg', shot, i + 1);
      await db.stepResult.create({
        data: {
          id: newId(ID_PREFIX.step),
          runId,
          attempt,
          index: i + 1,
          action: step.action,
          label: step.label,
          target: step.target,
          outcome: step.fails?.outcome ?? 'passed',
          error: step.fails?.error ?? null,
          startedAt,
          durationMs,
          screenshotId,
        },
      });
      if (step.fails) break;
    }
  } finally {
    const traceFile = path.join(await mkdtemp(path.join(tmpdir(), 'testrun-trace-')), 'trace.zip');
    await context.tracing.stop({ path: traceFile });
    await context.close();
    await put('trace', 'trace.zip', 'application/zip', await readFile(traceFile), null);
    await rm(path.dirname(traceFile), { recursive: true, force: true });
    if (videoDir) {
      const [file] = await readdir(videoDir);
      if (file) await put('video', 'video.webm', 'video/webm', await readFile(path.join(videoDir, file)), null);
      await rm(videoDir, { recursive: true, force: true });
    }
  }
  const ok = await finishRun(
    db,
    runId,
    attempt,
    plan.outcome ?? { status: 'passed', resultSummary: `Passed: ${plan.steps.length} steps.` },
  );
  if (!ok) throw new Error(`run ${runId} could not be finished`);
}

/** The suite every view test looks at: a pass, a failure, an error, a disabled test and another pass. */
export function mixedPlans(options: { video: boolean }): RunPlan[] {
  return [
    {
      name: 'Home page loads',
      steps: [STEPS.goto(), STEPS.expectTitle(), STEPS.clickProducts()],
      video: options.video,
    },
    {
      name: 'Sign in works',
      steps: [STEPS.goto(), STEPS.fill(), STEPS.clickMissing(), STEPS.expectTitle()],
      outcome: {
        status: 'failed',
        resultSummary: 'Failed at step 3 (click "text=Sign in"): element not found within 1 s',
        code: 'element_not_found',
        message: 'element "text=Sign in" not found within 1 s',
        step: 3,
      },
    },
    {
      name: 'Checkout completes',
      steps: [STEPS.goto(), STEPS.slow(), STEPS.clickProducts()],
      outcome: {
        status: 'error',
        resultSummary: 'Error at step 2 (waitFor ".checkout"): the test time budget of 1 s ran out',
        code: 'timeout',
        message: 'the test time budget of 1 s ran out during step 2',
        step: 2,
      },
    },
    { name: 'Legacy coupon flow', enabled: false, steps: [] },
    { name: 'Search finds a mug', steps: [STEPS.goto(), STEPS.fill()] },
  ];
}
