import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { dropDatabase, ensureDatabase, listMigrations, migrateDatabase, MIGRATIONS_DIR } from '@testrun/core/migrate';
import { uniqueTag } from '../support/harness';
import { present } from '../support/present';

/*
 * The migration that makes a Playwright test one test of its project (20261206090000_test_identity),
 * applied to a database of its own that holds the old shape: a Playwright test with a copy in each of
 * two suites, each copy with its runs, both in a deployment, beside two step tests of one key in
 * those suites (two tests, which stay two). After it: one test (the live copy of the first suite),
 * every run and deployment row on it, the other copy's id an alias of it.
 */

const MIGRATION = '20261206090000_test_identity';
let url: string;
let pg: Client;
let dirs: string[] = [];

/** A folder of copies of the repository's migrations up to `last` (excluded unless `including`). */
async function migrationsUpTo(last: string, including: boolean): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'testrun-migrations-'));
  dirs.push(dir);
  for (const name of listMigrations().filter((n) => n < last || (including && n === last)))
    await cp(path.join(MIGRATIONS_DIR, name), path.join(dir, name), { recursive: true });
  return dir;
}

beforeAll(async () => {
  const base = new URL(present(process.env.DATABASE_URL, 'DATABASE_URL'));
  base.pathname = `/${base.pathname.slice(1)}_identity_${uniqueTag()}`;
  url = base.toString();
  await ensureDatabase(url);
  await migrateDatabase(url, await migrationsUpTo(MIGRATION, false));
  pg = new Client({ connectionString: url });
  await pg.connect();
});

afterAll(async () => {
  await pg.end();
  await dropDatabase(url);
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  dirs = [];
});

const PW = (line: number) =>
  JSON.stringify({
    playwright: {
      bundle: `sha256:${'a'.repeat(64)}`,
      config: 'playwright.config.js',
      file: 'tests/cart.spec.js',
      line,
      column: 1,
      titlePath: ['adds an item'],
      project: '',
      browser: 'chromium',
      tags: [],
    },
  });
const STEPS = JSON.stringify([{ action: 'goto', url: '/' }]);

/** The old shape: workspace w, project p, suites all (first) and cart, each with its own copy. */
async function seedOldShape(): Promise<void> {
  await pg.query(`
    INSERT INTO workspaces (id, name, plan, max_active_runs, monthly_runs) VALUES ('w', 'W', 'team', 10, 1000);
    INSERT INTO projects (id, workspace_id, slug, name, base_url) VALUES ('p', 'w', 'shop', 'Shop', 'http://127.0.0.1:2');
    INSERT INTO suites (id, workspace_id, project_id, slug, name, position) VALUES
      ('s-cart', 'w', 'p', 'cart', 'Cart', 1), ('s-all', 'w', 'p', 'all', 'All', 0);`);
  // The cart suite's copy is the older one; the first suite's copy stays all the same.
  await pg.query(
    `INSERT INTO tests (id, workspace_id, project_id, suite_id, key, name, position, timeout_ms, steps, created_at) VALUES
      ('t-cart', 'w', 'p', 's-cart', 'pw-1', 'adds an item', 0, 30000, $1, now() - interval '2 days'),
      ('t-all', 'w', 'p', 's-all', 'pw-1', 'adds an item', 0, 30000, $1, now() - interval '1 day'),
      ('step-cart', 'w', 'p', 's-cart', 'login', 'Log in', 1, 30000, $2, now()),
      ('step-all', 'w', 'p', 's-all', 'login', 'Log in', 1, 30000, $2, now())`,
    [PW(3), STEPS],
  );
  await pg.query(`
    INSERT INTO deployments (id, workspace_id, project_id, version, document, changes, activated_at)
      VALUES ('d1', 'w', 'p', 1, '{}', '{"added":[],"removed":[],"changed":[]}', now());
    UPDATE projects SET active_deployment_id = 'd1' WHERE id = 'p';`);
  await pg.query(
    `INSERT INTO deployment_tests (deployment_id, test_id, suite_id, suite_slug, key, name, enabled, position, steps,
      timeout_ms, retries) VALUES
      ('d1', 't-all', 's-all', 'all', 'pw-1', 'adds an item', true, 0, $1, 30000, 0),
      ('d1', 'step-all', 's-all', 'all', 'login', 'Log in', true, 1, $2, 30000, 0),
      ('d1', 't-cart', 's-cart', 'cart', 'pw-1', 'adds an item', true, 2, $1, 30000, 0),
      ('d1', 'step-cart', 's-cart', 'cart', 'login', 'Log in', true, 3, $2, 30000, 0)`,
    [PW(3), STEPS],
  );
  await pg.query(
    `INSERT INTO runs (id, workspace_id, project_id, test_id, suite_id, position, status, base_url, test_name, steps,
      timeout_ms, result_summary, retry, retries, finished_at, deployment_id)
    SELECT 'r-' || t.id || '-' || n, 'w', 'p', t.id, t.suite_id, n, 'passed', 'http://127.0.0.1:2', t.name, t.steps,
      30000, 'Passed.', CASE WHEN n = 1 THEN 1 ELSE 0 END, 1, now(), 'd1'
    FROM tests t CROSS JOIN generate_series(0, 1) n`,
  );
}

test('merges the copies of a Playwright test into one, keeping every run, deployment row and id', async () => {
  await seedOldShape();
  const applied = await migrateDatabase(url, await migrationsUpTo(MIGRATION, true));
  expect(applied.applied).toEqual([MIGRATION]);

  const tests = await pg.query<{ id: string; suite_id: string }>('SELECT id, suite_id FROM tests ORDER BY id');
  expect(tests.rows).toEqual([
    { id: 'step-all', suite_id: 's-all' },
    { id: 'step-cart', suite_id: 's-cart' },
    { id: 't-all', suite_id: 's-all' },
  ]);
  // Its history: the four runs (two flaky) of both copies, each still listed in its own suite.
  const runs = await pg.query<{ id: string; test_id: string; suite_id: string; retry: number }>(
    "SELECT id, test_id, suite_id, retry FROM runs WHERE id LIKE 'r-t-%' ORDER BY id",
  );
  expect(runs.rows).toEqual([
    { id: 'r-t-all-0', test_id: 't-all', suite_id: 's-all', retry: 0 },
    { id: 'r-t-all-1', test_id: 't-all', suite_id: 's-all', retry: 1 },
    { id: 'r-t-cart-0', test_id: 't-all', suite_id: 's-cart', retry: 0 },
    { id: 'r-t-cart-1', test_id: 't-all', suite_id: 's-cart', retry: 1 },
  ]);
  expect((await pg.query("SELECT count(*)::int AS n FROM runs WHERE test_id LIKE 'step-%'")).rows).toEqual([{ n: 4 }]);
  const listed = await pg.query<{ suite_slug: string; test_id: string }>(
    'SELECT suite_slug, test_id FROM deployment_tests ORDER BY position',
  );
  expect(listed.rows).toEqual([
    { suite_slug: 'all', test_id: 't-all' },
    { suite_slug: 'all', test_id: 'step-all' },
    { suite_slug: 'cart', test_id: 't-all' },
    { suite_slug: 'cart', test_id: 'step-cart' },
  ]);
  expect((await pg.query('SELECT id, test_id FROM test_aliases')).rows).toEqual([{ id: 't-cart', test_id: 't-all' }]);
});
