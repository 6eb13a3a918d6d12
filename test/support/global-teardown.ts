import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { dropDatabase } from '@testrun/core';

export default async function globalTeardown(): Promise<void> {
  if (process.env.KEEP_TEST_DB !== '1' && process.env.DATABASE_URL?.includes('/testrun_test_')) {
    await dropDatabase(process.env.DATABASE_URL).catch(() => undefined);
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
  if (process.env.ARTIFACTS_DIR?.includes('testrun-artifacts-')) rmSync(process.env.ARTIFACTS_DIR, { recursive: true, force: true });
}
