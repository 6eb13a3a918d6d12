/**
 * `testrun deploy` of a project file with `playwright:`: the CLI packs a small Playwright project
 * written as teams write them (a TypeScript config, a page object, a JSON data file, an npm package
 * with a dependency in the project's node_modules, a spec) into a deterministic bundle, refuses what
 * cannot be bundled (a missing import, a native module, a file outside the project's directory, a
 * bundle over the cap) naming the import and the file, and uploads it to the real API once.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createGunzip } from 'node:zlib';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { extract } from 'tar-stream';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { bundleExists } from '@testrun/core/bundles';
import { planBundle } from '../../packages/cli/src/bundle/collect';
import { packBundle, type PackedBundle } from '../../packages/cli/src/bundle/pack';
import { serveTestApi } from '../api/api-harness';
import { createTenant } from '../support/harness';
import { runCliHere } from './cli-harness';

const PROJECT_FILE = `slug: pw-shop
name: Shop
baseUrl: http://127.0.0.1:2
playwright:
  config: e2e/playwright.config.ts
  include: ["e2e/fixtures/**"]
suites:
  - slug: all
    playwright: {}
`;

const FILES: Record<string, string> = {
  'testrun.yaml': PROJECT_FILE,
  'e2e/playwright.config.ts': `import { defineConfig } from '@playwright/test';
export default defineConfig({ testDir: './tests', use: { baseURL: 'http://localhost:3000' } });
`,
  'e2e/pages/login.page.ts': `import type { Page } from '@playwright/test';
import users from '../data/users.json';
import { slugify } from 'tiny-slug';
// import { unused } from './not-bundled';
export class LoginPage {
  constructor(private readonly page: Page) {}
  async login() { await this.page.fill('#user', slugify(users[0].name)); }
}
`,
  'e2e/data/users.json': '[{ "name": "Demo User" }]\n',
  'e2e/tests/login.spec.ts': `import { test, expect } from '@playwright/test';
import { LoginPage } from '../pages/login.page.js';
test('logs in @smoke', async ({ page }) => { await new LoginPage(page).login(); expect(1).toBe(1); });
`,
  'e2e/fixtures/cart.txt': 'three apples\n',
  'e2e/unreferenced.ts': 'export const nobody = 1;\n',
  'node_modules/@playwright/test/package.json':
    '{ "name": "@playwright/test", "version": "1.65.1", "main": "index.js" }',
  'node_modules/@playwright/test/index.js': 'module.exports = {};\n',
  'node_modules/tiny-slug/package.json':
    '{ "name": "tiny-slug", "version": "1.0.0", "main": "index.js", "dependencies": { "tiny-lower": "^1.0.0" } }',
  'node_modules/tiny-slug/index.js':
    "const lower = require('tiny-lower');\nexports.slugify = (s) => lower(s).replace(/ /g, '-');\n",
  'node_modules/tiny-lower/package.json':
    '{ "name": "tiny-lower", "version": "1.0.0", "exports": { ".": "./lower.js" } }',
  'node_modules/tiny-lower/lower.js': 'module.exports = (s) => s.toLowerCase();\n',
  'node_modules/unused-pkg/package.json': '{ "name": "unused-pkg", "version": "1.0.0" }',
};

/** The file's fixtures, and what a test writes beside one (outside its project's directory), go here; removed after. */
let fixtures: string | undefined;
afterAll(() => {
  if (fixtures !== undefined) rmSync(fixtures, { recursive: true, force: true });
});

/** A fresh copy of the fixture project (plus `extra` files), its directory. */
function fixture(extra: Record<string, string> = {}): string {
  fixtures ??= mkdtempSync(path.join(tmpdir(), 'testrun-cli-bundle-'));
  const dir = mkdtempSync(path.join(fixtures, 'project-'));
  for (const [name, text] of Object.entries({ ...FILES, ...extra })) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

async function entries(bytes: Uint8Array): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const tar = extract();
  tar.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: unknown) => chunks.push(c as Buffer));
    stream.on('end', () => {
      out.set(
        `${header.name} ${header.mode.toString(8)} ${header.mtime.getTime()}`,
        Buffer.concat(chunks).toString('utf8'),
      );
      next();
    });
  });
  await pipeline(Readable.from([Buffer.from(bytes)]), createGunzip(), tar);
  return out;
}

async function packed(dir: string, maxBytes?: number): Promise<PackedBundle> {
  const plan = planBundle(path.join(dir, 'testrun.yaml'), {
    config: 'e2e/playwright.config.ts',
    include: ['e2e/fixtures/**'],
  });
  expect(plan.refusals).toEqual([]);
  const bundle = await packBundle(plan, maxBytes);
  if ('refusal' in bundle) throw new Error(bundle.refusal);
  return bundle;
}

/** The refusals of packing the fixture with `extra` files. */
function refusals(extra: Record<string, string>): string[] {
  const dir = fixture(extra);
  return planBundle(path.join(dir, 'testrun.yaml'), { config: 'e2e/playwright.config.ts' }).refusals;
}

describe('packing a Playwright project', () => {
  it('holds the config, the spec, what they import, the npm packages and their dependencies, and the include globs', async () => {
    const bundle = await packed(fixture());
    const files = await entries(bundle.bytes);
    expect([...files.keys()]).toEqual([
      'testrun-bundle.json 644 0',
      'e2e/data/users.json 644 0',
      'e2e/fixtures/cart.txt 644 0',
      'e2e/pages/login.page.ts 644 0',
      'e2e/playwright.config.ts 644 0',
      'e2e/tests/login.spec.ts 644 0',
      'node_modules/tiny-lower/lower.js 644 0',
      'node_modules/tiny-lower/package.json 644 0',
      'node_modules/tiny-slug/index.js 644 0',
      'node_modules/tiny-slug/package.json 644 0',
    ]);
    expect(JSON.parse(files.get('testrun-bundle.json 644 0') ?? '')).toEqual({
      format: 1,
      config: 'e2e/playwright.config.ts',
      playwrightVersion: '1.65.1',
      files: 9,
    });
    expect(bundle.files).toBe(9);
    expect(bundle.digest).toBe(`sha256:${createHash('sha256').update(bundle.bytes).digest('hex')}`);
  });

  it('is deterministic: the same files give the same bytes, whatever their times and wherever they are', async () => {
    const first = await packed(fixture());
    const elsewhere = fixture();
    utimesSync(path.join(elsewhere, 'e2e/tests/login.spec.ts'), new Date(2001, 1, 1), new Date(2001, 1, 1));
    const second = await packed(elsewhere);
    expect(second.digest).toBe(first.digest);
    const changed = await packed(fixture({ 'e2e/data/users.json': '[{ "name": "Other" }]\n' }));
    expect(changed.digest).not.toBe(first.digest);
  });

  it('refuses an import that does not resolve, naming the import and file:line', () => {
    expect(
      refusals({
        'e2e/tests/broken.spec.ts':
          "import { test } from '@playwright/test';\nimport { gone } from './helpers/gone';\n",
      }),
    ).toEqual([
      'e2e/tests/broken.spec.ts:2: cannot resolve import "./helpers/gone" (no such file) (to leave e2e/tests/broken.spec.ts out of the bundle, add it to playwright.exclude)',
    ]);
    expect(refusals({ 'e2e/tests/pkg.spec.ts': "import 'not-installed';\n" })).toEqual([
      'e2e/tests/pkg.spec.ts:1: cannot resolve import "not-installed" (package "not-installed" is not installed in a node_modules above it) (to leave e2e/tests/pkg.spec.ts out of the bundle, add it to playwright.exclude)',
    ]);
  });

  it('refuses a native module, naming the package and the file that imports it', () => {
    const found = refusals({
      'e2e/tests/hash.spec.ts': "\n\nconst bcrypt = require('fast-hash');\n",
      'node_modules/fast-hash/package.json': '{ "name": "fast-hash", "version": "1.0.0", "main": "index.js" }',
      'node_modules/fast-hash/index.js': "module.exports = require('./build/Release/hash.node');\n",
      'node_modules/fast-hash/build/Release/hash.node': 'ELF',
    });
    expect(found).toEqual([
      'e2e/tests/hash.spec.ts:3: imports native module "fast-hash" (build/Release/hash.node): compiled add-ons cannot run in the service; use a pure JavaScript package, or leave it out with playwright.exclude: ["node_modules/fast-hash"]',
    ]);
  });

  it("refuses a file outside the project file's directory", () => {
    const dir = fixture({ 'e2e/tests/out.spec.ts': "import { shared } from '../../../shared-helpers';\n" });
    writeFileSync(path.join(path.dirname(dir), 'shared-helpers.ts'), 'export const shared = 1;\n');
    const found = planBundle(path.join(dir, 'testrun.yaml'), { config: 'e2e/playwright.config.ts' }).refusals;
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      /^e2e\/tests\/out\.spec\.ts:1: imports "\.\.\/\.\.\/\.\.\/shared-helpers" \(.*shared-helpers\.ts\), which is outside the project file's directory/,
    );
  });

  it('refuses a bundle over the cap, naming it', async () => {
    const plan = planBundle(path.join(fixture(), 'testrun.yaml'), { config: 'e2e/playwright.config.ts' });
    const over = await packBundle(plan, 100);
    expect('refusal' in over && over.refusal).toMatch(
      /^the bundle is \d+ bytes, over the cap of 100 bytes \(BUNDLE_LIMITS\.maxBytes\)/,
    );
  });
});

describe('testrun deploy --file with playwright:', () => {
  let served: Awaited<ReturnType<typeof serveTestApi>>;
  beforeAll(async () => {
    served = await serveTestApi();
  });
  afterAll(async () => {
    await served.close();
  });

  it('--dry-run packs and uploads (so the service can list its tests); a deploy then finds it there', async () => {
    const t = await createTenant(served.api.db, { scopes: ['run', 'preview', 'deploy'] });
    const env = { TESTRUN_API_URL: `http://127.0.0.1:${served.port}`, TESTRUN_API_KEY: t.key };
    const store = new LocalArtifactStore(served.api.config.artifactsDir);
    const dir = fixture();
    const file = path.join(dir, 'testrun.yaml');
    const { digest } = await packed(dir);

    const dry = await runCliHere(['deploy', '--file', file, '--dry-run'], env);
    // This fixture's @playwright/test is a stub without its cli.js: packed by file names, and said so.
    expect(dry.stderr).toContain(
      `${file}: playwright: warning: no @playwright/test installed above e2e/ (node_modules/@playwright/test/cli.js) to read the config with: packed the *.spec.*`,
    );
    expect(dry.stderr).toContain(`Bundle: 9 files, `);
    expect(dry.stderr).toContain(`(${digest}); uploaded.`);
    expect(await bundleExists(store, t.workspace.id, digest)).toBe(true);
    // This API has no worker to discover the tests with: the dry run is a 503, nothing else stored.
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain('discovery_unavailable');

    const first = await runCliHere(['deploy', '--file', file, '--preview'], env);
    expect(first.stderr).toContain(`(${digest}); already uploaded.`);
    expect(first.code).toBe(2);
    expect(first.stderr).toContain('discovery_unavailable');
  });

  it('a bundle that cannot be packed is printed and nothing is sent', async () => {
    const t = await createTenant(served.api.db, { scopes: ['run', 'preview', 'deploy'] });
    const env = { TESTRUN_API_URL: `http://127.0.0.1:${served.port}`, TESTRUN_API_KEY: t.key };
    const dir = fixture({ 'e2e/tests/broken.spec.ts': "import { gone } from './gone';\n" });
    const res = await runCliHere(['deploy', '--file', path.join(dir, 'testrun.yaml')], env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `${path.join(dir, 'testrun.yaml')}: playwright: e2e/tests/broken.spec.ts:1: cannot resolve import "./gone" (no such file)`,
    );
    expect(res.stderr).toContain('cannot be packed; nothing was deployed');
    const deployments = await served.api.db.deployment.count({ where: { workspaceId: t.workspace.id } });
    expect(deployments).toBe(0);
  });
});
