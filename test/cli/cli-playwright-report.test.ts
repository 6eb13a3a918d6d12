/**
 * The CLI speaks of Playwright tests as Playwright does: `testrun deploy` (and its dry run, of a
 * project that does not exist yet) lists them by spec file and title path; `testrun run` prints
 * each as `file › title` with its duration, and a failure's error; its JUnit is the shape of
 * Playwright's junit reporter (a testsuite per spec file, title paths, the file as classname and
 * file, the run's view as an [[ATTACHMENT|…]] line). Through the real API, worker and sandbox.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { usePlaywrightWorker, writeTeamRepository } from '../e2e/playwright-site';
import { createTenant } from '../support/harness';
import { runCliHere } from './cli-harness';

jest.setTimeout(300_000);

const parts = usePlaywrightWorker({ WORKER_CONCURRENCY: '1' });

/** The team's project: two spec files, a describe, one test that fails with expected and received. */
function teamProject(baseUrl: string): string {
  const files: Record<string, string> = {
    'testrun.yaml': `slug: pw-report
name: Report
baseUrl: ${baseUrl}
playwright:
  config: e2e/playwright.config.ts
suites:
  - slug: all
    playwright: {}
`,
    'e2e/playwright.config.ts': `import { defineConfig } from '@playwright/test';
export default defineConfig({ testDir: './tests' });
`,
    'e2e/tests/cart.spec.ts': `import { expect, test } from '@playwright/test';
test.describe('cart', () => {
  test('adds an item', () => {
    expect(1 + 1).toBe(2);
  });
  test('totals the items', () => {
    expect(1 + 1).toBe(3);
  });
});
`,
    'e2e/tests/login.spec.ts': `import { expect, test } from '@playwright/test';
test('signs in', () => {
  expect('in').toBe('in');
});
`,
  };
  const dir = writeTeamRepository('testrun-pw-report-', files);
  return dir;
}

let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = teamProject(parts.site.url);
  const tenant = await createTenant(parts.db, { scopes: ['run', 'preview', 'deploy'] });
  env = { TESTRUN_API_URL: parts.api.url, TESTRUN_API_KEY: tenant.key };
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The listing every deployment of this project prints: by spec file, each test by its title path. */
const LISTING =
  /\n {2}\S*tests\/cart\.spec\.ts\n {4}\+ cart › adds an item\n {4}\+ cart › totals the items\n {2}\S*tests\/login\.spec\.ts\n {4}\+ signs in\n/;

it('a dry run of a project that does not exist yet lists what it would hold, by file and title', async () => {
  const dry = await runCliHere(['deploy', '--file', path.join(dir, 'testrun.yaml'), '--dry-run'], env);
  expect(dry).toMatchObject({ code: 0 });
  expect(dry.stdout).toContain('Dry run of pw-report: 3 added, 0 removed, 0 changed; nothing stored.');
  expect(dry.stdout).toMatch(LISTING);
  expect(dry.stdout).not.toMatch(/pw-[0-9a-f]{16}/);
  const deployed = await runCliHere(['deploy', '--file', path.join(dir, 'testrun.yaml')], env);
  expect(deployed).toMatchObject({ code: 0 });
  expect(deployed.stdout).toMatch(
    /^Deployed pw-report version 1 \(dep_\w+, active\): 3 added, 0 removed, 0 changed\.\n/,
  );
  expect(deployed.stdout).toMatch(LISTING);
});

it('testrun run prints file › title with durations and the error; its JUnit is as Playwright writes it', async () => {
  const junit = path.join(dir, 'junit.xml');
  const run = await runCliHere(
    ['run', '--project', 'pw-report', '--suite', 'all', '--junit', junit, '--poll-interval', '300ms'],
    env,
  );
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(/ {2}passed {2}\S*tests\/cart\.spec\.ts › cart › adds an item \(\d[^)]*\)\n/);
  expect(run.stderr).toMatch(/ {2}passed {2}\S*tests\/login\.spec\.ts › signs in \(\d[^)]*\)\n/);
  // The closing line of the failure: its name, then the error's first lines (expected, received and
  // the code frame as Playwright printed them), and the view.
  expect(run.stderr).toMatch(/\nFAILED \S*tests\/cart\.spec\.ts › cart › totals the items: [^\n]+/);
  expect(run.stderr).toMatch(/\n {8}Expected: 3\n {8}Received: 2\n[^]*\n {8}> {2}7 \| +expect\(1 \+ 1\)\.toBe\(3\);\n/);

  const xml = readFileSync(junit, 'utf8');
  expect(XMLValidator.validate(xml)).toBe(true);
  type Case = Record<string, unknown> & { name: string; classname: string; file: string };
  const parsed = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    isArray: (name) => name === 'testsuite' || name === 'testcase',
  }).parse(xml) as { testsuites: { testsuite: Array<{ name: string; tests: string; testcase: Case[] }> } };
  const suites = parsed.testsuites.testsuite;
  expect(suites.map((s) => [path.basename(s.name), s.tests])).toEqual([
    ['cart.spec.ts', '2'],
    ['login.spec.ts', '1'],
  ]);
  const cart = suites[0]?.testcase ?? [];
  expect(cart.map((c) => c.name)).toEqual(['cart › adds an item', 'cart › totals the items']);
  // Named from the config's testDir as Playwright's junit reporter names it; file the repository's path.
  expect(suites[0]?.name).toBe('cart.spec.ts');
  for (const c of cart) expect([c.classname, c.file]).toEqual(['cart.spec.ts', 'e2e/tests/cart.spec.ts']);
  const failed = cart[1] as Case & { failure: { '#text': string }; 'system-out': string };
  expect(failed.failure['#text']).toMatch(/^cart\.spec\.ts:\d+:\d+ › cart › totals the items\n/);
  expect(failed.failure['#text']).toMatch(/Expected: 3/);
  expect(failed['system-out']).toMatch(/^\[\[ATTACHMENT\|https?:\/\/[^/]+\/view\/runs\/run_\w+\/\S+\]\]$/);
});
