import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT, testTargetAllow } from './processes';

/**
 * Brings every package's dist/ up to date (`turbo run build`; a cache hit when nothing changed). Tests
 * import sources, but the processes they spawn (API, worker, the `testrun` binary) run the built
 * JavaScript, as production does, so a test never exercises an older build than the code beside it.
 */
function buildWorkspace(): void {
  const turbo = path.join(REPO_ROOT, 'node_modules', '.bin', 'turbo');
  const result = spawnSync(turbo, ['run', 'build', '--output-logs=errors-only'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (result.error) throw new Error(`could not run ${turbo}: ${result.error.message}`, { cause: result.error });
  if (result.status !== 0) throw new Error(`pnpm build failed:\n${result.stdout}${result.stderr}`);
}

/**
 * Each jest run gets its own database (built from the migrations), its own Redis key prefix and
 * its own artifacts directory, so concurrent runs on one machine never see each other. Workers
 * inherit these variables.
 */
export default async function globalSetup(): Promise<void> {
  buildWorkspace();
  // Loaded after the build: jest's global setup resolves @testrun/core to its dist like node does.
  const { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL } = await import('@testrun/core/env');
  const { ensureDatabase, migrateDatabase } = await import('@testrun/core/migrate');
  const tag = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const base = new URL(process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  base.pathname = `/testrun_test_${tag}`;
  const databaseUrl = base.toString();
  try {
    await ensureDatabase(databaseUrl);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new Error(`Postgres is not reachable (${reason}). Run: bash infra/local-services.sh`, { cause: e });
  }
  await migrateDatabase(databaseUrl);
  process.env.DATABASE_URL = databaseUrl;
  // Each test file clones this database (test/support/per-file-setup.ts); nobody else connects to it.
  process.env.TESTRUN_TEMPLATE_DATABASE_URL = databaseUrl;
  process.env.REDIS_URL = process.env.REDIS_URL || DEFAULT_REDIS_URL;
  process.env.REDIS_PREFIX = `testrun-test-${tag}`;
  process.env.TESTRUN_TEMPLATE_REDIS_PREFIX = process.env.REDIS_PREFIX;
  process.env.TESTRUN_SECRET = 'test-secret-test-secret-test-secret-0123456789';
  process.env.ARTIFACTS_DIR = mkdtempSync(path.join(tmpdir(), 'testrun-artifacts-'));
  // The fixture projects' bundles, packed once per run (fixture-bundles.ts).
  process.env.TESTRUN_TEST_BUNDLES = mkdtempSync(path.join(tmpdir(), 'testrun-bundles-'));
  process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'error';
  process.env.TESTRUN_TEST_TAG = tag;
  // The fixture sites run on loopback, which the target network policy closes by default: open their
  // ports only (testTargetAllow), never every service of 127.0.0.1.
  process.env.TARGET_ALLOW = process.env.TARGET_ALLOW || testTargetAllow();
}
