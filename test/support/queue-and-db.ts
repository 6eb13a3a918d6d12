import { Redis } from 'ioredis';
import type { Db } from '@testrun/core/db';
import { createRunQueue, type RunQueue } from '@testrun/core/queue';
import { testDb } from './harness';
import { present } from './present';

/** The test database and the run queue on the test Redis (its prefix), and how to close both. */
export function openQueueAndDb(): { db: Db; queue: RunQueue; close: () => Promise<void> } {
  const db = testDb();
  const redis = new Redis(present(process.env.REDIS_URL, 'REDIS_URL'), { maxRetriesPerRequest: null });
  const queue = createRunQueue(redis, present(process.env.REDIS_PREFIX, 'REDIS_PREFIX'));
  return {
    db,
    queue,
    close: async () => {
      await queue.close();
      redis.disconnect();
      await db.$disconnect();
    },
  };
}
