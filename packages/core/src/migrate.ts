import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { errorMessage } from './logger';

export const MIGRATIONS_DIR = path.resolve(__dirname, '../../../prisma/migrations');

/** Any fixed number: the advisory lock that keeps two migrators from interleaving. */
const MIGRATION_LOCK = 7_247_001;

export type MigrationResult = { applied: string[]; alreadyApplied: string[] };

/**
 * Applies `prisma/migrations/<name>/migration.sql` in name order, each in its own transaction, and
 * records it in Prisma's `_prisma_migrations` table with Prisma's checksum (SHA-256 of the file), so
 * that `prisma migrate deploy` on a machine with Prisma's engine agrees with what was done here.
 */
export async function migrateDatabase(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<MigrationResult> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`);
    const done = await client.query<{ migration_name: string; checksum: string }>(
      'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const applied = new Map(done.rows.map((r) => [r.migration_name, r.checksum]));
    const result: MigrationResult = { applied: [], alreadyApplied: [] };
    for (const name of listMigrations(dir)) {
      const sql = readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const previous = applied.get(name);
      if (previous !== undefined) {
        if (previous !== checksum)
          throw new Error(`migration ${name} was changed after it was applied (checksum differs)`);
        result.alreadyApplied.push(name);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), 1)`,
          [randomUUID(), checksum, name],
        );
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${name} failed: ${errorMessage(e)}`, { cause: e });
      }
      result.applied.push(name);
    }
    return result;
  } finally {
    await client.end();
  }
}

export function listMigrations(dir = MIGRATIONS_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort();
}

/** Creates the database named in the URL when it does not exist (connecting to `postgres`). */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === '42P04') return false; // created concurrently
    throw e;
  } finally {
    await client.end();
  }
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
