import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { discoverTests, runPlaywrightTests } from '../../../apps/worker/src/executors/playwright';
import { serveSite, type Site } from './pw-harness';

/*
 * PLAYWRIGHT_SANDBOX=off (docs/SANDBOX.md, "Opting out"): the same runner and reporter without the
 * sandbox, for a single-tenant install whose machine cannot sandbox. Discovery lists what it lists
 * in the sandbox, and a run's results, steps (their files relative to the bundle), setup project,
 * variables and evidence are the same; only the isolation is gone.
 */

jest.setTimeout(180_000);

const FIXTURES = path.join(__dirname, '../../fixtures/playwright');
let base: string;
let shop: Site;

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'testrun-pw-unsandboxed-'));
  shop = await serveSite();
});

afterAll(async () => {
  shop.server.close();
  await rm(base, { recursive: true, force: true });
});

test('discovery lists the projects and tests without the sandbox', async () => {
  const discovery = await discoverTests({
    bundleDir: path.join(FIXTURES, 'discover'),
    configFile: 'e2e/playwright.config.js',
    scratchDir: await mkdtemp(path.join(base, 'list-')),
    isolation: 'none',
  });
  if ('error' in discovery) throw new Error(discovery.error);
  expect(discovery.projects.map((p) => p.name)).toEqual(['setup', 'desktop', 'firefox']);
  expect(discovery.tests).toContainEqual(
    expect.objectContaining({ file: 'e2e/tests/catalog.spec.js', titlePath: ['catalog', 'lists every product'] }),
  );
});

test('a run without the sandbox: outcomes, the setup project and a variable, steps relative to the bundle, evidence on the host', async () => {
  const scratchDir = await mkdtemp(path.join(base, 'run-'));
  const ref = (title: string) => ({ file: 'e2e/outcomes.spec.js', project: 'app', titlePath: [title] });
  const results = await runPlaywrightTests(
    {
      bundleDir: path.join(FIXTURES, 'outcomes'),
      configFile: 'e2e/playwright.config.js',
      scratchDir,
      tests: [ref('passes'), ref('expect fails'), ref('skipped in code')],
      env: { SHOP_USER: 'alice' },
      baseUrl: shop.origin,
      evidence: 'on',
      isolation: 'none',
    },
    () => undefined,
  );
  expect(results).toHaveLength(3);
  const [fails, passes, skipped] = results.sort((a, b) => a.status.localeCompare(b.status));
  expect([fails?.status, passes?.status, skipped?.status]).toEqual(['failed', 'passed', 'skipped']);
  expect(fails?.code).toBe('expectation_failed');
  // The failing step's location is the bundle's file, as in the sandbox.
  expect(fails?.steps.map((s) => s.location?.file)).toContain('e2e/outcomes.spec.js');
  // Evidence "on": the trace and screenshot are files under the scratch directory, on the host.
  const files = (passes?.attachments ?? []).map((a) => a.path ?? '');
  expect(files.length).toBeGreaterThan(0);
  for (const file of files) {
    expect(file.startsWith(scratchDir)).toBe(true);
    expect(existsSync(file)).toBe(true);
  }
});
