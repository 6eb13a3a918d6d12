// pnpm db:migrate: creates the database if absent and applies every migration not yet applied.
import { DEFAULT_DATABASE_URL, ensureDatabase, migrateDatabase } from '@testrun/core';

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  if (await ensureDatabase(url)) process.stderr.write(`created database ${new URL(url).pathname.slice(1)}\n`);
  const { applied, alreadyApplied } = await migrateDatabase(url);
  process.stderr.write(
    `migrations: ${applied.length} applied${applied.length ? ` (${applied.join(', ')})` : ''}, ${alreadyApplied.length} already applied\n`,
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`db:migrate failed: ${(e as Error).message}\n`);
  process.exit(1);
});
