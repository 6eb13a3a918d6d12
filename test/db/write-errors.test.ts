import type { Db } from '@testrun/core/db';
import { isPermanentWriteError } from '../../apps/worker/src/run/retry-write';
import { testDb } from '../support/harness';
import { rejectionOf } from '../support/present';

/*
 * Which failures of a run's result writes the worker retries (retry-write.ts), judged on the errors
 * Prisma and its pg adapter really throw against Postgres: a duplicate key, a missing table, a
 * syntax error can never pass by waiting. A duplicate artifact row was retried every 2 s for the
 * whole 600 s bound, one run after another, holding the worker's slots: the adapter names the
 * SQLSTATE `originalCode` for the errors it maps to a kind, which the check did not read.
 */

let db: Db;
beforeAll(async () => {
  db = testDb();
  await db.$executeRawUnsafe('CREATE TABLE IF NOT EXISTS write_errors_probe (id int PRIMARY KEY)');
});
afterAll(async () => {
  await db.$executeRawUnsafe('DROP TABLE IF EXISTS write_errors_probe');
  await db.$disconnect();
});

it('a duplicate key (23505), as Prisma throws it, is permanent', async () => {
  await db.$executeRaw`INSERT INTO write_errors_probe VALUES (1)`;
  const error = await rejectionOf(() => db.$executeRaw`INSERT INTO write_errors_probe VALUES (1)`);
  expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).toContain('23505');
  expect(isPermanentWriteError(error)).toBe(true);
});

it('a missing table (42P01) and a syntax error (42601) are permanent', async () => {
  const missing = await rejectionOf(() => db.$executeRawUnsafe('INSERT INTO write_errors_missing VALUES (1)'));
  expect(isPermanentWriteError(missing)).toBe(true);
  const syntax = await rejectionOf(() => db.$executeRawUnsafe('INSERT INTO write_errors_probe VALUE (1)'));
  expect(isPermanentWriteError(syntax)).toBe(true);
});
