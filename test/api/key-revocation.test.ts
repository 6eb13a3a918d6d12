// Accepted keys are kept in memory by each API replica; a change of a key's standing must still
// be refused on the very next request on every replica. Two API instances on one Redis prefix
// (two replicas of one deployment), each with its own memory, both warmed before every change.
import request from 'supertest';
import {
  addMember,
  changeApiKey,
  createApiKey,
  removeMember,
  setWorkspacePlan,
} from '../../packages/admin/src/operations';
import { authEpochKey } from '@testrun/core/api-keys';
import { freePort, startRedis, stopProcess } from '../support/processes';
import { createTenant, uniqueTag } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { problemOf } from './typed';

const prefix = `${process.env.REDIS_PREFIX}-revoke-${uniqueTag()}`;
let one: TestApi;
let two: TestApi;
beforeAll(() => {
  one = buildTestApi({ prefix });
  two = buildTestApi({ prefix, db: one.db });
});
afterAll(async () => {
  await two.close();
  await one.close();
});

const get = (api: TestApi, key: string) => request(api.app).get('/api/v1/runs/run_x').set(bearer(key));

/** Both replicas accept the key (404 for the unknown run), twice each, so both hold it in memory. */
async function warm(key: string): Promise<void> {
  for (const api of [one, two, one, two]) expect((await get(api, key)).status).toBe(404);
}

describe('a change of a key is seen at once by every replica', () => {
  it('revoke: 401 on the next request on both replicas', async () => {
    const t = await createTenant(one.db);
    await warm(t.key);
    await changeApiKey(one.db, t.keyId, 'revoke', one.announce);
    problemOf(await get(two, t.key), 'unauthorized');
    problemOf(await get(one, t.key), 'unauthorized');
  });

  it('pause and resume on the Free plan, then the plan decides', async () => {
    const t = await createTenant(one.db, { plan: 'free' });
    await warm(t.key);
    await changeApiKey(one.db, t.keyId, 'pause', one.announce);
    problemOf(await get(two, t.key), 'key_paused');
    problemOf(await get(one, t.key), 'key_paused');
    await changeApiKey(one.db, t.keyId, 'resume', two.announce);
    await warm(t.key);
    await changeApiKey(one.db, t.keyId, 'pause', one.announce);
    await setWorkspacePlan(one.db, t.workspace.id, { plan: 'team' }, one.announce);
    await warm(t.key);
    await setWorkspacePlan(one.db, t.workspace.id, { plan: 'free' }, two.announce);
    problemOf(await get(one, t.key), 'key_paused');
    problemOf(await get(two, t.key), 'key_paused');
  });

  it("the creator's removal: 403 key_creator_not_member on both; another member's key is untouched", async () => {
    const t = await createTenant(one.db);
    const otherEmail = `other-${t.tag}@example.test`;
    await addMember(one.db, t.workspace.id, otherEmail);
    const other = await createApiKey(one.db, { workspaceId: t.workspace.id, creatorEmail: otherEmail, name: 'o' });
    await warm(t.key);
    await warm(other.key);
    await removeMember(one.db, t.workspace.id, t.email, one.announce);
    problemOf(await get(two, t.key), 'key_creator_not_member');
    problemOf(await get(one, t.key), 'key_creator_not_member');
    expect((await get(two, other.key)).status).toBe(404);
  });

  it('a change made in SQL is seen once announced (the epoch in Redis is the signal)', async () => {
    const t = await createTenant(one.db);
    await warm(t.key);
    const before = Number((await one.redis.get(authEpochKey(prefix))) ?? '0');
    await one.db.apiKey.update({ where: { id: t.keyId }, data: { revokedAt: new Date() } });
    await one.announce();
    expect(Number(await one.redis.get(authEpochKey(prefix)))).toBeGreaterThan(before);
    problemOf(await get(one, t.key), 'unauthorized');
    problemOf(await get(two, t.key), 'unauthorized');
  });

  it('the announcement fails when Redis cannot be reached; the change is stored and the command says so', async () => {
    const t = await createTenant(one.db);
    const port = await freePort();
    const redis = await startRedis(port);
    const dead = buildTestApi({ env: { REDIS_URL: `redis://127.0.0.1:${port}` }, db: one.db });
    try {
      await stopProcess(redis);
      await expect(changeApiKey(one.db, t.keyId, 'revoke', dead.announce)).rejects.toThrow(
        /is revoked, but the API could not be told at once.*within 10 s/,
      );
      expect((await one.db.apiKey.findUniqueOrThrow({ where: { id: t.keyId } })).revokedAt).toBeInstanceOf(Date);
    } finally {
      await dead.close();
    }
  });
});

describe('a replica that loses Redis trusts nothing from memory', () => {
  it('a key it holds answers 503 (the rate limit cannot be counted), a revoked one 401', async () => {
    const port = await freePort();
    const redis = await startRedis(port);
    const lone = buildTestApi({ env: { REDIS_URL: `redis://127.0.0.1:${port}` }, db: one.db });
    try {
      const t = await createTenant(one.db);
      const gone = await createTenant(one.db);
      for (const key of [t.key, gone.key, t.key, gone.key]) expect((await get(lone, key)).status).toBe(404);
      await stopProcess(redis);
      // Revoked in Postgres with no one told: without Redis the replica reads the key again.
      await one.db.apiKey.update({ where: { id: gone.keyId }, data: { revokedAt: new Date() } });
      problemOf(await get(lone, t.key), 'service_unavailable');
      problemOf(await get(lone, gone.key), 'unauthorized');
    } finally {
      await lone.close();
    }
  });
});
