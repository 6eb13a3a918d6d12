import { createPrisma, readSql } from '@testrun/core/db';
import { present } from '../support/present';

/*
 * `$disconnect()` of a client made by createPrisma closes every connection of its pool, also when
 * only readSql used it (Prisma itself never connected): an idle connection left open keeps the
 * process alive until the pool's idle timeout, and fails with an unhandled error when its database
 * is dropped.
 */

/** The sockets and timers that keep this process alive, counted by kind. */
function holding(): { sockets: number; timers: number } {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return { sockets: counts.TCPSocketWrap ?? 0, timers: counts.Timeout ?? 0 };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

it.each([
  ['only readSql used it', false],
  ['Prisma and readSql used it', true],
])('$disconnect leaves no connection nor timer of the pool when %s', async (_, viaPrisma) => {
  const before = holding();
  const db = createPrisma({ databaseUrl: present(process.env.DATABASE_URL, 'DATABASE_URL') });
  if (viaPrisma) await db.$queryRawUnsafe('SELECT 1');
  expect(await readSql(db, 'one', 'SELECT 1 AS one', [])).toEqual([{ one: 1 }]);
  expect(holding().sockets).toBeGreaterThan(before.sockets);
  await db.$disconnect();
  await settle();
  const after = holding();
  expect(after.sockets).toBe(before.sockets);
  // Jest's own timers come and go; the pool's idle timers (one per idle connection) are gone.
  expect(after.timers).toBeLessThanOrEqual(before.timers);
});
