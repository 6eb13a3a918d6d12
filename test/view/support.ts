import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '@testrun/core';
import type { BrowserContext, Page } from 'playwright';
import type { BrowserPool } from '@testrun/worker';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { testDb } from '../support/harness';
import { createBrowserPool } from './browser';
import type { WorkerParts } from './seed';
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
