import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { dropDatabase } from '@testrun/core/migrate';
import { releaseShare, sweepStaleScratch } from '../../apps/worker/src/sandbox';

export default async function globalTeardown(): Promise<void> {
  const template = process.env.TESTRUN_TEMPLATE_DATABASE_URL;
  if (process.env.KEEP_TEST_DB !== '1' && template?.includes('/testrun_test_')) {
    await dropPerFileDatabases(template).catch(() => undefined);
    await dropDatabase(template).catch(() => undefined);
  }
  const prefix = process.env.REDIS_PREFIX;
  if (prefix?.startsWith('testrun-test-') && process.env.REDIS_URL) {
    const redis = new Redis(process.env.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== '0');
    } catch {
      // Redis gone: nothing to clean.
    } finally {
      redis.disconnect();
    }
  }
  // The sandboxes' shares (apps/worker/src/sandbox/share.ts) go with their process, but not with a
  // jest process: this one's, then those of the jest workers, gone by now.
  await releaseShare().catch(() => undefined);
  await sweepStaleScratch().catch(() => undefined);
  if (process.env.ARTIFACTS_DIR?.includes('testrun-artifacts-'))
    rmSync(process.env.ARTIFACTS_DIR, { recursive: true, force: true });
  if (process.env.TESTRUN_TEST_BUNDLES?.includes('testrun-bundles-'))
    rmSync(process.env.TESTRUN_TEST_BUNDLES, { recursive: true, force: true });
}

/** Drops the databases the test files cloned from the template (`<template>_<suffix>`). */
async function dropPerFileDatabases(template: string): Promise<void> {
  const url = new URL(template);
  const name = url.pathname.slice(1);
  const rows = await withPostgres(url, (c) =>
    c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${name}\\_%`]),
  );
  for (const { datname } of rows.rows) {
    const u = new URL(template);
    u.pathname = `/${datname}`;
    await dropDatabase(u.toString()).catch(() => undefined);
  }
}

async function withPostgres<T>(url: URL, fn: (c: Client) => Promise<T>): Promise<T> {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const c = new Client({ connectionString: admin.toString() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}
