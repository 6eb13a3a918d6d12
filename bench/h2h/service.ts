/**
 * The service as a bench drives it: the built API as its own process (plain node on dist, as
 * production runs it) on a database and Redis prefix of the bench's own, a workspace with one key
 * and a project applied, and workers started on demand. Everything is removed by `close`.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { ApiKeyScope, ProjectFile } from '@testrun/contracts';
import { addMember, applyProject, createApiKey, createWorkspace } from '../../packages/admin/src/operations';
import { createPrisma, type Db } from '@testrun/core/db';
import { readCommonConfig } from '@testrun/core/env';
import { ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { freePort, spawnService, testTargetAllow } from '../../test/support/processes';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Debian's build of Chromium's headless shell (package chromium-headless-shell). */
export const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell';
/**
 * What a headless launch runs, on `playwright test`'s side as in the service's worker: Chromium's
 * headless shell when the machine has it (as Playwright's own headless Chromium is), else CHROMIUM.
 */
export const HEADLESS_CHROMIUM = existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : CHROMIUM;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts the API on `database` with `project` applied to a new workspace; its key has `scopes`
 * (default `run`); `targetAllow` replaces the test set-up's TARGET_ALLOW (with a site's own port, say).
 */
export async function startBenchService(
  name: string,
  project: ProjectFile,
  options: { scopes?: readonly ApiKeyScope[]; targetAllow?: string } = {},
) {
  const common = readCommonConfig(process.env);
  const dbUrl = new URL(common.databaseUrl);
  const database = `testrun_bench_${name}`;
  dbUrl.pathname = `/${database}`;
  const databaseUrl = dbUrl.toString();
  await ensureDatabase(databaseUrl);
  await migrateDatabase(databaseUrl);
  const db: Db = createPrisma({ databaseUrl, max: 2 });
  const prefix = `testrun-bench-${name}-${randomBytes(3).toString('hex')}`;
  const artifactsDir = mkdtempSync(path.join(tmpdir(), `testrun-${name}-artifacts-`));

  const workspace = await createWorkspace(db, { name: prefix, plan: 'enterprise' });
  const email = `${prefix}@testrun.local`;
  await addMember(db, workspace.id, email);
  const { key } = await createApiKey(db, {
    workspaceId: workspace.id,
    creatorEmail: email,
    name,
    scopes: options.scopes,
  });
  await applyProject(db, workspace.id, project);

  const port = await freePort();
  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: prefix,
    ARTIFACTS_DIR: artifactsDir,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000',
    TARGET_ALLOW: options.targetAllow ?? testTargetAllow(),
    CHROMIUM_PATH: CHROMIUM,
  };
  const api = spawnService('api', { ...env, PORT: String(port) });
  const apiUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ready = await fetch(`${apiUrl}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (i > 200) throw new Error(`the API did not become ready:\n${api.output()}`);
    await sleep(100);
  }

  /** POSTs a run request; the suite run's (or run's) id. */
  const post = async (body: unknown): Promise<string> => {
    const res = await fetch(`${apiUrl}/api/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`POST /api/v1/runs answered ${res.status}: ${text}`);
    const created = JSON.parse(text) as { suiteRunId?: string; runId?: string };
    const id = created.suiteRunId ?? created.runId;
    if (!id) throw new Error(`POST /api/v1/runs answered without an id: ${text}`);
    return id;
  };

  /** Waits for a suite run to end; its status, passed count and end time. */
  const suiteTerminal = async (id: string) => {
    for (;;) {
      const row = await db.suiteRun.findUniqueOrThrow({
        where: { id },
        select: { status: true, passedCount: true, createdAt: true, finishedAt: true },
      });
      if (row.status !== 'queued' && row.status !== 'running' && row.finishedAt)
        return { ...row, finishedAt: row.finishedAt };
      await sleep(100);
    }
  };

  /** Postgres backends serving the bench database (their CPU counts for the service). */
  const backendPids = async (): Promise<number[]> => {
    const rows = await db.$queryRaw<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity WHERE datname = ${database} AND pid <> pg_backend_pid()`;
    return rows.map((r) => r.pid);
  };

  return {
    api,
    apiUrl,
    /** The workspace's id and its API key. */
    workspaceId: workspace.id,
    key,
    /** The bench's own database, for a second client (a worker's, say). */
    databaseUrl,
    db,
    post,
    suiteTerminal,
    backendPids,
    /** A worker process with `concurrency` slots, and `extra` in its environment. */
    spawnWorker: (concurrency: number, extra: Record<string, string> = {}) =>
      // The API's port, which the worker protects from runs (NETWORK_POLICY.md): this one's, not the default 3000.
      spawnService('worker', { ...env, PORT: String(port), ...extra, WORKER_CONCURRENCY: String(concurrency) }),
    close: async () => {
      api.child.kill('SIGTERM');
      await api.exited;
      await db.workspace.delete({ where: { id: workspace.id } });
      await db.$disconnect();
      const redis = new Redis(common.redisUrl);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
      rmSync(artifactsDir, { recursive: true, force: true });
    },
  };
}
