import { authChangeAnnouncer, type AuthChangeAnnouncer } from '@testrun/core/api-keys';
import { DEFAULT_REDIS_URL, readString, readUrl } from '@testrun/core/env';
import { createRedis } from '@testrun/core/queue';

/**
 * Runs `action` with the announcer of the deployment's API replicas (REDIS_URL and REDIS_PREFIX, as
 * the API reads them): a command that changes whether a key is accepted tells them after the change
 * is stored, so they refuse a revoked or paused key on the very next request. The Redis connection
 * is opened only if the action announces, and gives up after one attempt.
 */
export async function withAnnouncer<T>(
  env: NodeJS.ProcessEnv,
  action: (announce: AuthChangeAnnouncer) => Promise<T>,
): Promise<T> {
  const redis = createRedis(readUrl(env, 'REDIS_URL', DEFAULT_REDIS_URL, ['redis:', 'rediss:']), {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    return await action(authChangeAnnouncer(redis, readString(env, 'REDIS_PREFIX', 'testrun')));
  } finally {
    redis.disconnect();
  }
}
