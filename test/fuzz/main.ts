// `pnpm fuzz [--cases N] [--seed S]`: the fuzzer against a real API on a database of its own
// (created from DATABASE_URL's server, migrated, dropped afterwards) and a Redis prefix of its own.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { readCommonConfig } from '@testrun/core/env';
import { dropDatabase, ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { runFuzz } from './fuzz';

/** The seed `pnpm fuzz` and the CI slice use unless told otherwise. */
const DEFAULT_SEED = 20_261_122;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { cases: { type: 'string', default: '10000' }, seed: { type: 'string', default: String(DEFAULT_SEED) } },
  });
  const cases = Number(values.cases);
  const seed = Number(values.seed);
  if (!Number.isInteger(cases) || cases < 1 || !Number.isInteger(seed))
    throw new Error('--cases and --seed take integers');
  const url = new URL(readCommonConfig(process.env).databaseUrl);
  url.pathname = `/testrun_fuzz_${randomBytes(4).toString('hex')}`;
  await ensureDatabase(url.toString());
  await migrateDatabase(url.toString());
  try {
    const started = Date.now();
    const report = await runFuzz({ seed, cases, env: { ...process.env, DATABASE_URL: url.toString() } });
    process.stdout.write(
      `${JSON.stringify({ ...report, failures: report.failures.slice(0, 20), seconds: Math.round((Date.now() - started) / 1000) }, null, 2)}\n`,
    );
    process.exitCode = report.failures.length === 0 ? 0 : 1;
  } finally {
    await dropDatabase(url.toString());
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`fuzz: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
