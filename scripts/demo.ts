/**
 * `pnpm demo`: the whole service on one machine in one command, after `bash scripts/setup.sh`.
 * Starts the fixture shop, makes (or reuses) a demo workspace, member, key and project, starts the
 * API and a worker as child processes, enqueues the demo suite over HTTP, shows its progress, prints
 * every test's outcome and the link to the detailed view, and keeps API and worker running until
 * Ctrl-C, so the link opens. `--once` (for scripts and CI) exits 0 after printing, the children
 * stopped cleanly, and says that the link no longer opens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { addMember, applyProject, createApiKey, createWorkspace } from '../packages/admin/src/operations';
import { hashApiKey } from '@testrun/core/api-keys';
import { createPrisma, type Db } from '@testrun/core/db';
import { readCommonConfig, readInt } from '@testrun/core/env';
import { ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { TestrunApiError, TestrunClient } from '@testrun/client';
import type { SuiteRun } from '@testrun/contracts';
import { demoProjectFile, startFixtureSite } from '../test/fixtures/site';
import { enqueuePlaywrightDemo } from './demo-playwright';
import { freePort, serviceEntry } from '../test/support/processes';

const ROOT = path.resolve(__dirname, '..');
/** The demo's key file and logs: `.testrun/` of the checkout, or `DEMO_STATE_DIR`. */
const STATE_DIR = path.resolve(ROOT, process.env.DEMO_STATE_DIR || '.testrun');
const STATE_FILE = path.join(STATE_DIR, 'demo.json');
const DEMO_EMAIL = 'demo@testrun.local';
const once = process.argv.includes('--once');
/** winston levels at least as verbose as `info`, which a user may keep for the children. */
const VERBOSE_LEVELS = new Set(['info', 'http', 'verbose', 'debug', 'silly']);

type DemoState = { workspaceId: string; key: string };

const out = (line = '') => process.stdout.write(`${line}\n`);

/** Reuses the workspace and key kept in STATE_FILE (.testrun/demo.json) while both still exist; makes new ones otherwise. */
async function ensureTenant(db: Db): Promise<DemoState & { created: boolean }> {
  if (existsSync(STATE_FILE)) {
    const saved = JSON.parse(readFileSync(STATE_FILE, 'utf8')) as DemoState;
    const key = await db.apiKey.findUnique({ where: { hash: hashApiKey(saved.key) } });
    // A key of an older demo without the `deploy` scope cannot deploy the Playwright example.
    if (key && key.workspaceId === saved.workspaceId && !key.revokedAt && !key.paused && key.scopes.includes('deploy'))
      return { ...saved, created: false };
  }
  const workspace = await createWorkspace(db, { name: 'Demo', plan: 'team' });
  await addMember(db, workspace.id, DEMO_EMAIL);
  const { key } = await createApiKey(db, {
    workspaceId: workspace.id,
    creatorEmail: DEMO_EMAIL,
    name: 'demo',
    scopes: ['deploy'],
  });
  mkdirSync(STATE_DIR, { recursive: true });
  writeFileSync(STATE_FILE, JSON.stringify({ workspaceId: workspace.id, key }, null, 2), { mode: 0o600 });
  return { workspaceId: workspace.id, key, created: true };
}

/** A service started the way `pnpm api` / `pnpm worker` start it (node on the built JavaScript), its JSON log kept in .testrun/. */
function startService(
  name: 'api' | 'worker',
  env: Record<string, string>,
): { child: ChildProcess; ready: Promise<void>; logFile: string } {
  const logFile = path.join(STATE_DIR, `demo-${name}.log`);
  const log = createWriteStream(logFile, { flags: 'w' });
  const child = spawn(process.execPath, [serviceEntry(name)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let seen = '';
  const readyMessage = name === 'api' ? '"listening"' : '"worker ready"';
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      log.write(chunk);
      seen += chunk.toString('utf8');
      if (seen.includes(readyMessage)) resolve();
      if (seen.length > 100_000) seen = seen.slice(-10_000);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`${name} exited (${code}) before it was ready; see ${logFile}:\n${seen.slice(-2_000)}`)),
    );
  });
  return { child, ready, logFile };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const forced = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(forced);
}

/**
 * TARGET_ALLOW for the demo: exactly the ports it needs on 127.0.0.1, never the whole address (which
 * would open every service listening there): the fixture shop's and its second origin's, port 2
 * (nothing listens there: the unreachable test's target) and 4010, the base URL examples/playwright
 * declares (the Quickstart's `pnpm fixture`), which its deploy is checked against; its runs go to the shop.
 */
function siteAllow(site: { url: string; thirdParty: { url: string } }): string {
  const ports = ['2', '4010', new URL(site.url).port, new URL(site.thirdParty.url).port];
  return [...new Set(ports)].map((port) => `127.0.0.1:${port}`).join(',');
}

async function main(): Promise<void> {
  const common = readCommonConfig();
  await ensureDatabase(common.databaseUrl);
  await migrateDatabase(common.databaseUrl);
  const db = createPrisma({ databaseUrl: common.databaseUrl, max: 2 });

  const site = await startFixtureSite({ port: readInt(process.env, 'DEMO_SITE_PORT', 0, { max: 65_535 }) });
  const tenant = await ensureTenant(db);
  await applyProject(db, tenant.workspaceId, demoProjectFile(site.url));
  await db.$disconnect();

  const port = readInt(process.env, 'PORT', 0, { max: 65_535 }) || (await freePort());
  const apiUrl = `http://localhost:${port}`;
  const env = {
    PORT: String(port),
    PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? apiUrl,
    // The demo knows the children are ready from their info lines ("listening", "worker ready"):
    // a quieter LOG_LEVEL (warn, error) would leave it waiting for ever.
    LOG_LEVEL: VERBOSE_LEVELS.has(process.env.LOG_LEVEL ?? '') ? (process.env.LOG_LEVEL ?? 'info') : 'info',
    // The fixture site runs on loopback, which the target network policy closes by default.
    TARGET_ALLOW: process.env.TARGET_ALLOW ?? siteAllow(site),
  };
  const api = startService('api', env);
  const worker = startService('worker', env);
  const children = [api.child, worker.child];
  let stopping = false;
  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    out('Stopping the API and the worker...');
    await Promise.all(children.map(stopChild));
    await site.close();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  try {
    await Promise.all([api.ready, worker.ready]);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    await shutdown(1);
    return;
  }

  out(`Fixture shop:   ${site.url}`);
  out(`API:            ${apiUrl}  (log: ${path.relative(ROOT, api.logFile)})`);
  out(`Worker:         pid ${worker.child.pid}  (log: ${path.relative(ROOT, worker.logFile)})`);
  out(`Workspace:      ${tenant.workspaceId}`);
  out(
    tenant.created
      ? `API key:        ${tenant.key}  (shown once; kept in ${path.relative(ROOT, STATE_FILE)})`
      : `API key:        reused from ${path.relative(ROOT, STATE_FILE)}`,
  );
  out();

  const client = new TestrunClient({ apiUrl, apiKey: tenant.key, userAgent: 'testrun-demo' });
  let suiteRunId: string;
  let playwrightRunId: string;
  try {
    suiteRunId = (await client.enqueueSuite('demo-shop', 'smoke')).body.suiteRunId;
    out(`POST /api/v1/runs -> 201 {"suiteRunId":"${suiteRunId}"}  (step tests)`);
    playwrightRunId = await enqueuePlaywrightDemo(client, site.url, out);
    out(`POST /api/v1/runs -> 201 {"suiteRunId":"${playwrightRunId}"}  (Playwright tests)`);
  } catch (error) {
    const answer = error instanceof TestrunApiError ? ` answered ${error.status}` : ' failed';
    process.stderr.write(`POST /api/v1/runs${answer}: ${error instanceof Error ? error.message : String(error)}\n`);
    await shutdown(1);
    return;
  }

  let last = '';
  const showProgress = (progress: SuiteRun) => {
    const running = progress.tests.filter((t) => t.status === 'running').length;
    const queued = progress.tests.filter((t) => t.status === 'queued').length;
    const line = `  ${progress.status.padEnd(8)} queued ${queued}  running ${running}  passed ${progress.passed_count}  failed ${progress.failed_count}  error ${progress.error_count}  skipped ${progress.skipped_count}  of ${progress.total_count}`;
    if (line !== last) out(line);
    last = line;
  };
  const suiteRun = await client.waitForSuiteRun(suiteRunId, { pollIntervalMs: 1_000, onProgress: showProgress });
  await printSuiteRun(client, 'Step tests', suiteRun);
  last = '';
  const playwrightRun = await client.waitForSuiteRun(playwrightRunId, {
    pollIntervalMs: 1_000,
    onProgress: showProgress,
  });
  await printSuiteRun(client, 'Playwright tests (examples/playwright)', playwrightRun);
  if (once) {
    // The link is served by the API this command is about to stop: say so, and how to keep it.
    out('--once: the API stops now, so the link above no longer opens. Run `pnpm demo` without');
    out('--once to keep the API, the worker and the link up until Ctrl-C.');
    await shutdown(0);
    return;
  }
  out('API and worker keep running, so the link above opens; try the API with the key above.');
  out('Ctrl-C stops everything (and the link with it).');
}

/** A suite run's outcomes, one test a line with its summary, and the link to its view. */
async function printSuiteRun(client: TestrunClient, title: string, suiteRun: SuiteRun): Promise<void> {
  out();
  out(`${title}:`);
  for (const test of suiteRun.tests) {
    const run = await client.getRun(test.runId);
    out(`  ${run.status.padEnd(8)} ${test.name}`);
    out(`           ${run.result_summary}`);
  }
  out();
  out(`Suite run ${suiteRun.status}. Details, screenshots and recordings:`);
  out(`  ${suiteRun.suiteRunUrl}`);
  out();
}

main().catch((error: unknown) => {
  process.stderr.write(`demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
