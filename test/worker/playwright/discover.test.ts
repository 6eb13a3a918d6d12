import path from 'node:path';
import { discoverTests, playwrightTestKey } from '../../../apps/worker/src/executors/playwright';
import { sandboxDir } from './sandbox-dir';

/* Discovery of a team's Playwright project: `playwright test --list` in the real sandbox. */

jest.setTimeout(120_000);

const FIXTURES = path.join(__dirname, '../../fixtures/playwright');
const { scratch } = sandboxDir('discover');

test('lists every test with its file, title path, project, tags, browser and setup flag, and warns', async () => {
  const discovery = await discoverTests({
    bundleDir: path.join(FIXTURES, 'discover'),
    configFile: 'e2e/playwright.config.js',
    scratchDir: await scratch(),
  });
  if ('error' in discovery) throw new Error(discovery.error);
  expect(discovery.projects).toEqual([
    { name: 'setup', dependencies: [], browser: 'chromium' },
    { name: 'desktop', dependencies: ['setup'], browser: 'chromium' },
    { name: 'firefox', dependencies: [], browser: 'firefox' },
  ]);
  const catalog = discovery.tests.filter((t) => t.file === 'e2e/tests/catalog.spec.js');
  expect(catalog).toHaveLength(4); // two tests in two projects
  expect(catalog).toContainEqual({
    file: 'e2e/tests/catalog.spec.js',
    line: 5,
    column: 3,
    titlePath: ['catalog', 'lists every product'],
    project: 'desktop',
    tags: ['@smoke'],
    browser: 'chromium',
    setup: false,
  });
  expect(catalog).toContainEqual(
    expect.objectContaining({
      titlePath: ['catalog', 'filters @slow'],
      project: 'firefox',
      tags: ['@slow'],
      browser: 'firefox',
    }),
  );
  expect(discovery.tests).toContainEqual(
    expect.objectContaining({ file: 'e2e/tests/auth.setup.js', titlePath: ['log in'], project: 'setup', setup: true }),
  );
  expect(discovery.warnings).toEqual([expect.stringContaining('webServer'), expect.stringContaining('1.48.2')]);
  // The folder Playwright's reporters name the spec files from: the config's testDir.
  expect(discovery.rootDir).toBe('e2e/tests');
});

test('a spec that does not load is an error naming the missing module', async () => {
  const discovery = await discoverTests({
    bundleDir: path.join(FIXTURES, 'broken'),
    configFile: 'playwright.config.js',
    scratchDir: await scratch(),
  });
  expect('error' in discovery && discovery.error).toContain('does-not-exist');
});

test("a test's key is stable and depends on file, project and title path only", () => {
  const ref = { file: 'e2e/a.spec.ts', project: 'desktop', titlePath: ['catalog', 'lists'] };
  expect(playwrightTestKey(ref)).toMatch(/^pw-[0-9a-f]{16}$/);
  expect(playwrightTestKey({ ...ref, line: 9 } as typeof ref)).toBe(playwrightTestKey(ref));
  expect(playwrightTestKey({ ...ref, project: 'mobile' })).not.toBe(playwrightTestKey(ref));
  expect(playwrightTestKey({ ...ref, titlePath: ['catalog lists'] })).not.toBe(playwrightTestKey(ref));
});
