import type { ProblemFieldError } from '@testrun/contracts';
import { AdminError } from './operations';
import { createPrisma, type Db } from '@testrun/core/db';
import { DEFAULT_DATABASE_URL, readUrl } from '@testrun/core/env';

/**
 * Where one invocation of the admin commands reads and writes. `bin.ts` gives the process's own;
 * the tests give strings and their own environment, so the commands run in the test's process.
 */
export interface AdminContext {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Where `secret set` reads a value when no --value-env names one (opened only then). */
  stdin: () => NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Records the invocation's exit code (1 when a command failed). */
  setExitCode: (code: number) => void;
}

/** The context of the `testrun` process itself. */
export function processContext(): AdminContext {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: () => process.stdin,
    env: process.env,
    setExitCode: (code) => {
      process.exitCode = code;
    },
  };
}

/** What an admin command prints: `data` as JSON with --json, else `text`. */
export type Out = { data: object; text: string };

/** `--json` of a command that failed. */
export type AdminErrorOutput = { error: { message: string; errors: ProblemFieldError[] } };

/** The admin commands read DATABASE_URL once, when a command runs (and REDIS_URL, see ./announce). */
export function databaseUrl(env: NodeJS.ProcessEnv): string {
  return readUrl(env, 'DATABASE_URL', DEFAULT_DATABASE_URL, ['postgresql:', 'postgres:']);
}

/**
 * Runs one admin action with its own Prisma client and always disconnects, so the process exits
 * promptly. With --json, stdout carries exactly one JSON document (the result, or on failure
 * `{"error": {"message", "errors"}}`); human text and error lines go to stderr on failure.
 */
export async function runAction(ctx: AdminContext, json: boolean, action: (db: Db) => Promise<Out>): Promise<void> {
  let db: Db | undefined;
  try {
    db = createPrisma({ databaseUrl: databaseUrl(ctx.env), max: 2 });
    const out = await action(db);
    ctx.stdout.write(json ? `${JSON.stringify(out.data)}\n` : `${out.text}\n`);
  } catch (e) {
    const failure: AdminErrorOutput = {
      error: { message: e instanceof Error ? e.message : String(e), errors: e instanceof AdminError ? e.errors : [] },
    };
    ctx.stderr.write(`testrun admin: ${failure.error.message}\n`);
    for (const err of failure.error.errors) ctx.stderr.write(`  ${err.path || '(file)'}: ${err.message}\n`);
    if (json) ctx.stdout.write(`${JSON.stringify(failure)}\n`);
    ctx.setExitCode(1);
  } finally {
    await db?.$disconnect().catch(() => undefined);
  }
}
