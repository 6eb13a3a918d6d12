/**
 * The CLI packs what `playwright test --list` loads with the team's config, asked of the team's own
 * Playwright, in the layouts teams use (test/fixtures/repos): the config at the repository root
 * beside another runner's unit tests, the config in a subfolder with its testDir outside it, a
 * setup project named by a regex testMatch and a globalSetup, tsconfig `paths` through `extends`.
 * The bundle holds exactly those files; deployed through the real API, the worker's discovery in
 * its sandbox lists the tests `playwright test --list` lists on the fixture. A refusal names the
 * chain of imports that led to it and how to leave it out; `exclude` does; "no tests found" says
 * where each project looked.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Deployment } from '@testrun/contracts';
import { planBundle } from '../../packages/cli/src/bundle/collect';
import { deployFixture, usePlaywrightWorker } from '../e2e/playwright-site';
import { createTenant } from '../support/harness';

jest.setTimeout(240_000);

const REPOS = path.resolve(__dirname, '../fixtures/repos');
const PLAYWRIGHT = path.resolve(__dirname, '../../node_modules/@playwright/test');

const LAYOUTS = {
  'root-config': {
    config: 'playwright.config.ts',
    files: ['e2e/helpers/page.ts', 'e2e/home.spec.ts', 'package.json', 'playwright.config.ts', 'src/greeting.ts'],
  },
  'config-subdir': {
    config: 'config/playwright.config.ts',
    files: [
      'config/global-setup.ts',
      'config/playwright.config.ts',
      'config/seed.ts',
      'test/e2e/helpers/notes.ts',
      'test/e2e/specs/notes.spec.ts',
      'test/e2e/specs/setup-process.once.js',
    ],
  },
  'tsconfig-alias': {
    config: 'playwright.config.ts',
    files: [
      'config/tsconfig.base.json',
      'e2e/login.spec.ts',
      'playwright.config.ts',
      'src/pages/fields.ts',
      'src/pages/login.ts',
      'tsconfig.json',
    ],
  },
} as const;
type Layout = keyof typeof LAYOUTS;

let scratch: string | undefined;
afterAll(() => {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

/** A repository of `files` with the team's Playwright installed (this repository's, linked), its directory. */
function repo(files: Record<string, string>): string {
  scratch ??= mkdtempSync(path.join(tmpdir(), 'testrun-pack-layouts-'));
  const dir = mkdtempSync(path.join(scratch, 'repo-'));
  mkdirSync(path.join(dir, 'node_modules/@playwright'), { recursive: true });
  symlinkSync(PLAYWRIGHT, path.join(dir, 'node_modules/@playwright/test'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

type JsonSuite = {
  title: string;
  file: string;
  specs?: Array<{ title: string; line: number; tests: Array<{ projectName: string }> }>;
  suites?: JsonSuite[];
};

/** `project file:line title › path` of every test `playwright test --list` lists, run directly on the fixture. */
function listedByPlaywright(dir: string, config: string): string[] {
  const { JEST_WORKER_ID: _jest, ...env } = process.env;
  const out = execFileSync(
    process.execPath,
    [path.join(PLAYWRIGHT, 'cli.js'), 'test', '--list', '--reporter=json', '--config', config],
    { cwd: dir, env, encoding: 'utf8' },
  );
  const report = JSON.parse(out) as { config: { rootDir: string }; suites: JsonSuite[] };
  const found: string[] = [];
  const walk = (suite: JsonSuite, titles: string[]) => {
    const file = path.relative(dir, path.resolve(report.config.rootDir, suite.file));
    for (const spec of suite.specs ?? [])
      for (const t of spec.tests)
        found.push(`${t.projectName} ${file}:${spec.line} ${[...titles, spec.title].join(' › ')}`);
    for (const child of suite.suites ?? []) walk(child, [...titles, child.title]);
  };
  for (const suite of report.suites) walk(suite, []);
  return found.sort();
}

const discovered = (deployment: Deployment) =>
  deployment.tests
    .map((t) => `${t.location?.project ?? '?'} ${t.location?.file ?? '?'}:${t.location?.line ?? 0} ${t.name}`)
    .sort();

describe('packing by the config', () => {
  it.each(Object.keys(LAYOUTS) as Layout[])('%s: exactly what Playwright loads', (layout) => {
    const plan = planBundle(path.join(REPOS, layout, 'testrun.yaml'), { config: LAYOUTS[layout].config });
    expect(plan.refusals).toEqual([]);
    expect(plan.warnings).toEqual([]);
    expect([...plan.files.keys()].sort()).toEqual(LAYOUTS[layout].files);
  });

  it('names the chain of imports to a refused module and how to leave it out; exclude leaves it out', () => {
    const files = {
      'playwright.config.ts': "export default { testDir: './tests' };\n",
      'tests/ok.spec.ts': "import { test } from '@playwright/test';\ntest('ok', () => {});\n",
      'tests/a.spec.ts':
        "import { test } from '@playwright/test';\nimport { db } from '../src/helpers/db';\ntest('a', () => {});\n",
      'src/helpers/db.ts': "import sqlite from 'fast-sqlite';\nexport const db = sqlite;\n",
      'node_modules/fast-sqlite/package.json': '{ "name": "fast-sqlite", "version": "1.0.0", "main": "index.js" }',
      'node_modules/fast-sqlite/index.js': "module.exports = require('./build/sqlite.node');\n",
      'node_modules/fast-sqlite/build/sqlite.node': 'ELF',
    };
    const dir = repo(files);
    const refused = planBundle(path.join(dir, 'testrun.yaml'), { config: 'playwright.config.ts' });
    expect(refused.refusals).toEqual([
      'tests/a.spec.ts:2 → src/helpers/db.ts:1: imports native module "fast-sqlite" (build/sqlite.node): compiled add-ons cannot run in the service; use a pure JavaScript package, or leave it out with playwright.exclude: ["node_modules/fast-sqlite"]',
    ]);
    const excluded = planBundle(path.join(dir, 'testrun.yaml'), {
      config: 'playwright.config.ts',
      exclude: ['tests/a.spec.ts'],
    });
    expect(excluded.refusals).toEqual([]);
    expect([...excluded.files.keys()].sort()).toEqual(['playwright.config.ts', 'tests/ok.spec.ts']);
  });

  it('an import that does not resolve is named with its chain; "no tests found" says where each project looked', () => {
    const dir = repo({
      'e2e/playwright.config.ts':
        "export default { testDir: '../specs', testIgnore: /legacy/, projects: [{ name: 'setup', testMatch: /global\\.setup\\.ts/ }, { name: 'chromium' }] };\n",
      'specs/readme.md': 'no tests yet\n',
      'specs/legacy/old.spec.ts': "import { test } from '@playwright/test';\ntest('old', () => {});\n",
    });
    expect(planBundle(path.join(dir, 'testrun.yaml'), { config: 'e2e/playwright.config.ts' }).refusals).toEqual([
      'no tests found: project "setup" looked in specs/ for /global\\.setup\\.ts/, ignoring /legacy/; project "chromium" looked in specs/ for **/*.@(spec|test).?(c|m)[jt]s?(x), ignoring /legacy/ (as `playwright test --list` with this config)',
    ]);
  });
});

describe('what Playwright cannot load', () => {
  it("a config that does not load is refused with Playwright's words; a test file that throws, with its file and line (Playwright then lists nothing: exclude cannot hide it)", () => {
    const broken = repo({ 'playwright.config.ts': "throw new Error('BASE_URL is not set');\n" });
    expect(planBundle(path.join(broken, 'testrun.yaml'), { config: 'playwright.config.ts' }).refusals).toEqual([
      expect.stringMatching(
        /^playwright\.config\.ts: `playwright test --list` fails with this config: .*BASE_URL is not set/,
      ),
    ]);
    const throwing = repo({
      'playwright.config.ts': "export default { testDir: './tests' };\n",
      'tests/ok.spec.ts': "import { test } from '@playwright/test';\ntest('ok', () => {});\n",
      'tests/bad.spec.ts': "import { test } from '@playwright/test';\nthrow new Error('boom');\n",
    });
    const plan = planBundle(path.join(throwing, 'testrun.yaml'), { config: 'playwright.config.ts' });
    expect(plan.refusals).toEqual([
      'tests/bad.spec.ts:2: `playwright test --list` fails: Error: boom (fix it, or leave it out with testIgnore in the config)',
    ]);
    const exclude = ['tests/bad.spec.ts'];
    expect(
      planBundle(path.join(throwing, 'testrun.yaml'), { config: 'playwright.config.ts', exclude }).refusals,
    ).toEqual(plan.refusals);
  });
});

it("the team's config, run to list its tests, does not see the service's API key", () => {
  const dir = repo({
    'playwright.config.ts':
      "import { writeFileSync } from 'node:fs';\nwriteFileSync(__dirname + '/seen.txt', String(process.env.TESTRUN_API_KEY));\nexport default { testDir: './tests' };\n",
    'tests/ok.spec.ts': "import { test } from '@playwright/test';\ntest('ok', () => {});\n",
  });
  const before = process.env.TESTRUN_API_KEY;
  process.env.TESTRUN_API_KEY = 'trk_secret_for_this_test';
  try {
    expect(planBundle(path.join(dir, 'testrun.yaml'), { config: 'playwright.config.ts' }).refusals).toEqual([]);
  } finally {
    if (before === undefined) delete process.env.TESTRUN_API_KEY;
    else process.env.TESTRUN_API_KEY = before;
  }
  expect(readFileSync(path.join(dir, 'seen.txt'), 'utf8')).toBe('undefined');
});

describe('a deploy of each layout', () => {
  const parts = usePlaywrightWorker({ WORKER_CONCURRENCY: '1' });

  it.each(Object.keys(LAYOUTS) as Layout[])(
    '%s: the sandbox discovers the tests `playwright test --list` lists',
    async (layout) => {
      const tenant = await createTenant(parts.db, { scopes: ['deploy'] });
      const dir = path.join(REPOS, layout);
      const deployment = await deployFixture(parts.api.url, tenant.key, path.join(dir, 'testrun.yaml'), {
        slug: layout,
        name: layout,
        baseUrl: parts.site.url,
        playwright: { config: LAYOUTS[layout].config },
        suites: [{ slug: 'all', name: 'All', playwright: {} }],
      });
      // A setup project's tests run before the tests that depend on them, not as tests of their own (docs/PLAYWRIGHT.md).
      const expected = listedByPlaywright(dir, LAYOUTS[layout].config).filter((t) => !t.startsWith('setup '));
      expect(expected.length).toBeGreaterThan(0);
      expect(discovered(deployment)).toEqual(expected);
    },
  );
});
