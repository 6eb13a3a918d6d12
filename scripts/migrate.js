#!/usr/bin/env node
// @ts-check
'use strict';
// `pnpm db:migrate`, and the production image's migration step: creates the database if absent and
// applies every migration in prisma/migrations not yet applied. Plain JavaScript on @testrun/core's
// built output, so it runs with node alone (type-checked through the root tsconfig's checkJs).
const { DEFAULT_DATABASE_URL } = require('@testrun/core/env');
const { ensureDatabase, migrateDatabase } = require('@testrun/core/migrate');

async function main() {
  const url = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  if (await ensureDatabase(url)) process.stderr.write(`created database ${new URL(url).pathname.slice(1)}\n`);
  const { applied, alreadyApplied } = await migrateDatabase(url);
  const list = applied.length ? ` (${applied.join(', ')})` : '';
  process.stderr.write(`migrations: ${applied.length} applied${list}, ${alreadyApplied.length} already applied\n`);
}

main().catch((/** @type {unknown} */ e) => {
  process.stderr.write(`db:migrate failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
