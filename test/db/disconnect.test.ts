import { createHook } from 'node:async_hooks';
import { Socket } from 'node:net';
import { createPrisma, readSql } from '@testrun/core/db';
import { present } from '../support/present';

/*
 * `$disconnect()` of a client made by createPrisma closes every connection of its pool, also when
 * only readSql used it (Prisma itself never connected): an idle connection left open keeps the
 * process alive until the pool's idle timeout, and fails with an unhandled error when its database
 * is dropped.
 *
 * What the test counts is what opened while it ran, not the process's totals: a jest worker runs
 * many files, and what an earlier file's code left (a keep-alive socket, a timer) may close or fire
 * in the middle of this one.
 */

const DATABASE_URL = present(process.env.DATABASE_URL, 'DATABASE_URL');
const POSTGRES_PORT = Number(new URL(DATABASE_URL).port || 5432);

/** The sockets to Postgres this process holds open now. */
function postgresSockets(): Set<Socket> {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return new Set(
    handles.filter((h): h is Socket => h instanceof Socket && !h.destroyed && h.remotePort === POSTGRES_PORT),
  );
}

/** Node's Timeout object, as an async hook sees it: its delay, and whether it has fired or been cleared. */
interface TimeoutResource {
  _idleTimeout: number;
  _destroyed: boolean;
}

/**
 * Starts watching the timers made from now on; `pending(minMs)` counts those of `minMs` or more that
 * have neither fired nor been cleared. The pool's idle timers are seconds long; jest's own and the
 * test's are shorter.
 */
function watchTimers(): { pending(minMs: number): number; stop(): void } {
  const made: TimeoutResource[] = [];
  const hook = createHook({
    init: (_id, type, _trigger, resource) => {
      if (type === 'Timeout') made.push(resource as TimeoutResource);
    },
  }).enable();
  return {
    pending: (minMs) => made.filter((t) => !t._destroyed && t._idleTimeout >= minMs).length,
    stop: () => hook.disable(),
  };
}

/** The sockets of `opened` still open after up to 2 s (a socket closes a moment after the pool ends). */
async function stillOpen(opened: Socket[]): Promise<number> {
  for (let waited = 0; ; waited += 100) {
    const open = opened.filter((s) => postgresSockets().has(s)).length;
    if (open === 0 || waited >= 2_000) return open;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it.each([
  ['only readSql used it', false],
  ['Prisma and readSql used it', true],
])('$disconnect leaves no connection nor timer of the pool when %s', async (_, viaPrisma) => {
  const before = postgresSockets();
  const timers = watchTimers();
  try {
    const db = createPrisma({ databaseUrl: DATABASE_URL });
    if (viaPrisma) await db.$queryRawUnsafe('SELECT 1');
    expect(await readSql(db, 'one', 'SELECT 1 AS one', [])).toEqual([{ one: 1 }]);
    const opened = [...postgresSockets()].filter((s) => !before.has(s));
    expect(opened.length).toBeGreaterThan(0);
    await db.$disconnect();
    expect(await stillOpen(opened)).toBe(0);
    // The pool's idle timers (one per idle connection, 10 s) are gone with it.
    expect(timers.pending(1_000)).toBe(0);
  } finally {
    timers.stop();
  }
});
