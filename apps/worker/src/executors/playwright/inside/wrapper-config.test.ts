import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { OPTIONS_FILE, wrapperOptionsText, type WrapperOptions } from './protocol';
import { wrapConfig } from './wrapper-config';

describe('wrapConfig', () => {
  let dir: string;
  const cwd = process.cwd();

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'testrun-wrapper-'));
  });
  afterEach(() => {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The options for a bundle at `dir`, its config in e2e/, written where wrapConfig reads them. */
  function options(changes: Partial<WrapperOptions> = {}): string {
    const o: WrapperOptions = {
      bundleDir: dir,
      configDir: path.join(dir, 'e2e'),
      outputDir: '/work/output',
      reporter: '/opt/testrun/playwright/reporter.js',
      resultsFile: '/work/.testrun/results.jsonl',
      testListFile: path.join(dir, 'test-list.txt'),
      tests: [{ file: 'e2e/tests/a.spec.ts', project: 'chromium', titlePath: ['cart', 'buys'] }],
      workers: 2,
      baseURL: 'http://shop.test',
      proxy: { server: 'http://127.0.0.1:9' },
      retries: null,
      timeoutMs: null,
      chromium: '/usr/lib/chromium/chromium',
      headlessShell: '/usr/lib/chromium/chromium-headless-shell',
      chromiumArgs: ['--no-sandbox'],
      disabledFeatures: ['Translate'],
      trace: { mode: 'retain-on-failure', snapshots: true, screenshots: false, sources: true },
      video: 'off',
      screenshot: 'only-on-failure',
      selectBy: 'list',
      ...changes,
    };
    const file = path.join(dir, OPTIONS_FILE);
    writeFileSync(file, wrapperOptionsText(o));
    return file;
  }

  it("forces the service's settings on the team's config and each project, and writes the test list", () => {
    const team = {
      testDir: './tests',
      retries: 2,
      webServer: { command: 'npm start' },
      updateSnapshots: 'all',
      use: { channel: 'chrome', launchOptions: { args: ['--lang=fr', '--disable-features=A,B'] } },
      projects: [{ name: 'chromium', use: { connectOptions: { wsEndpoint: 'ws://x' } } }],
    };
    const config = wrapConfig({ default: team }, options());
    expect(process.cwd()).toBe(dir);
    expect(config.webServer).toBeUndefined();
    expect(config.updateSnapshots).toBeUndefined();
    expect(config).toMatchObject({
      testDir: './tests',
      retries: 2,
      workers: 2,
      outputDir: '/work/output',
      reporter: [
        ['/opt/testrun/playwright/reporter.js', { mode: 'run', file: '/work/.testrun/results.jsonl', root: dir }],
      ],
    });
    const use = config.use as Record<string, unknown>;
    expect(use.channel).toBeUndefined();
    expect(use).toMatchObject({ headless: true, baseURL: 'http://shop.test', proxy: { server: 'http://127.0.0.1:9' } });
    // The trace as the worker gives it, Playwright's object form included.
    expect(use.trace).toEqual({ mode: 'retain-on-failure', snapshots: true, screenshots: false, sources: true });
    expect(use.launchOptions).toEqual({
      executablePath: '/usr/lib/chromium/chromium',
      args: ['--lang=fr', '--no-sandbox', '--disable-features=Translate,A,B'],
    });
    const [project] = config.projects as Record<string, unknown>[];
    const projectUse = project?.use as Record<string, unknown>;
    expect(projectUse.connectOptions).toBeUndefined();
    // A project's launch options inherit the config's arguments, as Playwright merges them.
    expect((projectUse.launchOptions as { args: string[] }).args).toContain('--lang=fr');
    expect(readFileSync(path.join(dir, 'test-list.txt'), 'utf8')).toBe(
      '[chromium] \u203a a.spec.ts \u203a cart \u203a buys\n',
    );
  });

  it("launches Playwright's choice of Chromium: the headless shell, unless a channel asks for a full browser", () => {
    type Use = { launchOptions: { executablePath: string } };
    const executables = (config: Record<string, unknown>) =>
      [config.use as Use, ...(config.projects as { use: Use }[]).map((p) => p.use)].map(
        (use) => use.launchOptions.executablePath,
      );
    const team = {
      projects: [
        { name: 'plain' },
        { name: 'new-headless', use: { channel: 'chromium' } },
        { name: 'shell', use: { channel: 'chromium-headless-shell' } },
      ],
    };
    const [full, shell] = ['/usr/lib/chromium/chromium', '/usr/lib/chromium/chromium-headless-shell'];
    expect(executables(wrapConfig(team, options()))).toEqual([shell, shell, full, shell]);
    // A channel on the config's `use` reaches every project that names none of its own.
    expect(executables(wrapConfig({ ...team, use: { channel: 'chrome' } }, options()))).toEqual([
      full,
      full,
      full,
      shell,
    ]);
    // A host without the headless shell: the full Chromium for all.
    expect(executables(wrapConfig(team, options({ headlessShell: null })))).toEqual([full, full, full, full]);
  });

  it("selects by title where the runner has no test list: the project's grep matches the tests' title paths", () => {
    const config = wrapConfig(
      { projects: [{ name: 'chromium' }, { name: 'other' }] },
      options({ selectBy: 'title', retries: 0 }),
    );
    const [chromium, other] = config.projects as { grep?: RegExp; retries?: number }[];
    expect(chromium?.grep?.test(' chromium tests/a.spec.ts cart buys')).toBe(true);
    expect(chromium?.grep?.test('chromium tests/a.spec.ts cart sells')).toBe(false);
    // A project none of whose tests is selected runs none of them (before, all of them ran).
    expect(other?.grep?.test(' other tests/a.spec.ts cart buys')).toBe(false);
    expect(other?.grep?.test('other tests/b.spec.ts anything')).toBe(false);
    expect(chromium?.retries).toBe(0);
  });

  it('keeps the grep of a project the selected ones need: a setup project, its own setup, a teardown', () => {
    const config = wrapConfig(
      {
        projects: [
          { name: 'chromium', dependencies: ['setup'] },
          { name: 'setup', dependencies: ['db'], teardown: 'cleanup', grep: /setup/ },
          { name: 'db' },
          { name: 'cleanup' },
          { name: 'firefox', dependencies: ['setup'] },
        ],
      },
      options({ selectBy: 'title' }),
    );
    const byName = new Map((config.projects as { name: string; grep?: RegExp }[]).map((p) => [p.name, p.grep]));
    expect(byName.get('setup')).toEqual(/setup/);
    expect(byName.get('db')).toBeUndefined();
    expect(byName.get('cleanup')).toBeUndefined();
    expect(byName.get('firefox')?.test('firefox tests/a.spec.ts cart buys')).toBe(false);
  });
});
