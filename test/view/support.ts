import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '@testrun/core/db';
import type { BrowserContext, Page } from 'playwright';
import type { BrowserPool } from '@testrun/worker';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { testDb } from '../support/harness';
import { createBrowserPool } from './browser';
import { runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import { createSuiteRun, executeSuite, type RunPlan, type SeededSuite, type WorkerParts } from './seed';
import { startApi, type TestApiOptions } from './server';

/** The value, or a clear failure naming what was missing. */
export function defined<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`expected ${what}, found ${String(value)}`);
  return value;
}

/** A JSON body read as the type the view's code declares for it (the one place a body is typed). */
export async function readJson<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** Polls `check` until it returns something truthy; the jest timeout bounds the wait. */
export async function eventually<T>(check: () => T | Promise<T>, everyMs = 50): Promise<NonNullable<T>> {
  for (;;) {
    const value = await check();
    if (value) return value;
    await sleep(everyMs);
  }
}

/** One test file's world: the database, the fixture shop, the API with the view, and Chromium. */
export type ViewEnv = {
  db: Db;
  site: FixtureSite;
  api: Awaited<ReturnType<typeof startApi>>;
  pool: BrowserPool;
  /** What executeRun needs, wired to this API's database, store and keys. */
  worker: WorkerParts;
  close(): Promise<void>;
};

export async function startViewEnv(options: TestApiOptions = {}): Promise<ViewEnv> {
  const db = testDb();
  const [site, api] = await Promise.all([startFixtureSite(), startApi(db, options)]);
  const pool = createBrowserPool();
  const scratchDir = await mkdtemp(path.join(tmpdir(), 'testrun-view-worker-'));
  return {
    db,
    site,
    api,
    pool,
    worker: { db, store: api.store, keys: api.keys, browser: pool, scratchDir },
    async close() {
      await pool.close();
      await api.close();
      await site.close();
      await db.$disconnect();
      await rm(scratchDir, { recursive: true, force: true });
    },
  };
}

/** A reader's browser tab on the view: its own context of the pool's Chromium. Close the context in afterAll. */
export type Viewer = { context: BrowserContext; page: Page };

export async function openViewer(env: ViewEnv): Promise<Viewer> {
  const context = await (await env.pool.getBrowser()).newContext({ viewport: { width: 1280, height: 900 } });
  return { context, page: await context.newPage() };
}

/** A view test file's world: its env, one suite run executed by the worker, and a reader's tab. */
export type ViewSuite = {
  env: ViewEnv;
  suite: SeededSuite;
  viewer: Viewer;
  /** The view's page of the suite run. */
  suiteUrl: string;
  /** The view's page of the run of the suite's test at `position` (0-based). */
  runUrl: (position: number) => string;
  close(): Promise<void>;
};

/**
 * Starts the env, seeds `plans` as one suite run against `baseUrl` (default the fixture shop),
 * calls `prepare` (a secret variable to set, say), executes the suite's runs with the worker's own
 * executeRun, and opens a reader's tab. Close it in afterAll.
 */
export async function startViewSuite(
  plans: RunPlan[],
  options: { baseUrl?: string; prepare?: (env: ViewEnv, suite: SeededSuite) => Promise<unknown> } = {},
): Promise<ViewSuite> {
  const env = await startViewEnv();
  const suite = await createSuiteRun(env.db, env.api.keys, plans, { baseUrl: options.baseUrl ?? env.site.url });
  await options.prepare?.(env, suite);
  await executeSuite(env.worker, suite);
  const viewer = await openViewer(env);
  return {
    env,
    suite,
    viewer,
    suiteUrl: suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId),
    runUrl: (position) =>
      runViewUrl(env.api.origin, env.api.keys.view, defined(suite.runs[position], `run ${position}`).id),
    async close() {
      await viewer.context.close();
      await env.close();
    },
  };
}

/** The names of the tests a suite page's list shows (folded groups included), sorted. */
export function shownTests(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('li.test')]
      .filter((li) => !li.closest('[hidden]'))
      .map((li) => li.querySelector('.test-name')?.textContent ?? '')
      .sort(),
  );
}
