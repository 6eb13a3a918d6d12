import { AdminError, createPrisma, DEFAULT_DATABASE_URL, readUrl, type Db } from '@testrun/core';
import type { ProblemFieldError } from '@testrun/contracts';

/** What an admin command prints: `data` as JSON with --json, else `text`. */
export type Out = { data: object; text: string };

/** `--json` of a command that failed. */
export type AdminErrorOutput = { error: { message: string; errors: ProblemFieldError[] } };

/** The admin commands read DATABASE_URL once, when a command runs (and REDIS_URL, see ./announce). */
export function databaseUrl(): string {
  return readUrl(process.env, 'DATABASE_URL', DEFAULT_DATABASE_URL, ['postgresql:', 'postgres:']);
}

/**
 * Runs one admin action with its own Prisma client and always disconnects, so the process exits
 * promptly. With --json, stdout carries exactly one JSON document (the result, or on failure
 * `{"error": {"message", "errors"}}`); human text and error lines go to stderr on failure.
 */
export async function runAction(json: boolean, action: (db: Db) => Promise<Out>): Promise<void> {
  let db: Db | undefined;
  try {
    db = createPrisma({ databaseUrl: databaseUrl(), max: 2 });
    const out = await action(db);
    process.stdout.write(json ? `${JSON.stringify(out.data)}\n` : `${out.text}\n`);
  } catch (e) {
    const failure: AdminErrorOutput = {
      error: { message: e instanceof Error ? e.message : String(e), errors: e instanceof AdminError ? e.errors : [] },
    };
    process.stderr.write(`testrun admin: ${failure.error.message}\n`);
    for (const err of failure.error.errors) process.stderr.write(`  ${err.path || '(file)'}: ${err.message}\n`);
    if (json) process.stdout.write(`${JSON.stringify(failure)}\n`);
    process.exitCode = 1;
  } finally {
    await db?.$disconnect().catch(() => undefined);
  }
}
