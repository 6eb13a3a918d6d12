import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL, ensureDatabase, migrateDatabase } from '@testrun/core';

/**
 * Each jest run gets its own database (built from the migrations), its own Redis key prefix and
 * its own artifacts directory, so concurrent runs on one machine never see each other. Workers
 * inherit these variables.
 */
export default async function globalSetup(): Promise<void> {
  const tag = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const base = new URL(process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  base.pathname = `/testrun_test_${tag}`;
  const databaseUrl = base.toString();
  try {
    await ensureDatabase(databaseUrl);
  } catch (e) {
    throw new Error(`Postgres is not reachable (${(e as Error).message}). Run: bash infra/local-services.sh`);
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
  process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'error';
  process.env.TESTRUN_TEST_TAG = tag;
}
