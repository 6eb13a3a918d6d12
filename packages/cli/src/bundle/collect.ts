import { existsSync, lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { PlaywrightSection } from '@testrun/contracts';
import { addBaselines } from './baselines';
import { Collector } from './collector';
import { listWithPlaywright, playwrightCli, type FilePattern, type ListedConfig } from './playwright-list';
import { findPackageDir, readPackageJson, resolveImport } from './resolve';
import { globToRegExp, posixRelative, walkFiles } from './walk';

// What a bundle holds (docs/CLI.md, "Playwright bundles"): the config and what the team's own
// Playwright loads with it (every project's test files by its testDir, testMatch and testIgnore,
// setup and teardown projects included, globalSetup and globalTeardown), everything they import,
// the tsconfig files that resolve their imports, the `include` globs, and the committed snapshots
// `importBaselines` names (baselines.ts); less the `exclude` globs.
// Without a local Playwright to ask, spec files by their names, with a warning.

/** The names a spec, setup or teardown file has by Playwright's conventions: the fallback's test files. */
const SPEC_FILE = /\.(spec|test|setup|teardown)\.(ts|tsx|js|mjs|cjs|mts|cts)$/;
const SKIPPED_DIRS = new Set(['node_modules', '.git']);

/** The files of a bundle (bundle path → file on disk), or the refusals that stop it. */
export interface BundlePlan {
  /** The project file's directory, real path: the bundle's root. */
  root: string;
  /** The config, relative to the root. */
  config: string;
  files: Map<string, string>;
  refusals: string[];
  /** What the user should know about how it was packed (no local Playwright to ask). */
  warnings: string[];
  /** The team's installed @playwright/test version, or null. */
  playwrightVersion: string | null;
}

const showPattern = (p: FilePattern) => ('glob' in p ? p.glob : `/${p.regex}/${p.flags}`);

/** "no tests found", saying where each project looked. */
function noTestsFound(root: string, listed: ListedConfig): string {
  const where = listed.projects.map((p) => {
    const ignore = p.testIgnore.length > 0 ? `, ignoring ${p.testIgnore.map(showPattern).join(', ')}` : '';
    const name = p.name === '' ? 'the config' : `project "${p.name}"`;
    return `${name} looked in ${posixRelative(root, p.testDir) || '.'}/ for ${p.testMatch.map(showPattern).join(', ')}${ignore}`;
  });
  return `no tests found: ${where.join('; ')} (as \`playwright test --list\` with this config)`;
}

/** A file under the root (real path), or a refusal saying it is not. */
function underRoot(collector: Collector, file: string, what: string): string | null {
  const real = realpathSync(file);
  const rel = posixRelative(collector.root, real);
  if (!rel.startsWith('../') && !path.isAbsolute(rel)) return real;
  collector.refusals.push(
    `${what} ${real} is outside the project file's directory ${collector.root}; put the project file at the root of what the tests need`,
  );
  return null;
}

/** The config's globalSetup or globalTeardown entry: a file, or a package's module. */
function addGlobalHook(collector: Collector, entry: string, config: string): void {
  if (existsSync(entry) && statSync(entry).isFile()) {
    const real = underRoot(collector, entry, 'globalSetup/globalTeardown');
    if (real) collector.addLocal(real);
    return;
  }
  const resolved = resolveImport(entry, config);
  if (resolved.kind === 'file') {
    const real = underRoot(collector, resolved.file, 'globalSetup/globalTeardown');
    if (real) collector.addLocal(real);
  } else if (resolved.kind === 'missing')
    collector.refusals.push(
      `${posixRelative(collector.root, config)}: cannot resolve globalSetup/globalTeardown "${entry}"`,
    );
}

/**
 * What the team's Playwright lists, added to the collector: its test files and global hooks, or why
 * it cannot be. Returns the test files (real paths).
 */
function addListed(collector: Collector, cli: string, config: string): string[] {
  const configRel = posixRelative(collector.root, config);
  const listed = listWithPlaywright(cli, config, collector.root);
  if ('failure' in listed) {
    collector.refusals.push(`${configRel}: \`playwright test --list\` fails with this config: ${listed.failure}`);
    return [];
  }
  // A file that fails to load fails the whole listing, left out or not: only the config can skip it.
  for (const error of listed.errors) {
    const rel = error.file === null ? null : posixRelative(collector.root, error.file);
    collector.refusals.push(
      rel === null
        ? `${configRel}: \`playwright test --list\` fails: ${error.message}`
        : `${rel}${error.line === null ? '' : `:${error.line}`}: \`playwright test --list\` fails: ${error.message} (fix it, or leave it out with testIgnore in the config)`,
    );
  }
  const files = listed.files.filter((f) => !collector.excluded(posixRelative(collector.root, f)));
  if (listed.errors.length === 0 && files.length === 0) collector.refusals.push(noTestsFound(collector.root, listed));
  const tests: string[] = [];
  for (const file of files) {
    const real = underRoot(collector, file, 'the test file');
    if (real) collector.addLocal(real);
    if (real) tests.push(real);
  }
  for (const hook of [...listed.globalSetup, ...listed.globalTeardown]) addGlobalHook(collector, hook, config);
  return tests;
}

/** Without a local Playwright: spec, setup and teardown files by name under the config's directory (returned). */
function addConventional(collector: Collector, configDir: string): string[] {
  const specs = walkFiles(configDir, SKIPPED_DIRS).filter(
    (f) => SPEC_FILE.test(f) && !collector.excluded(posixRelative(collector.root, f)),
  );
  if (specs.length === 0)
    collector.refusals.push(
      `no tests found: looked for *.spec.*, *.test.*, *.setup.* and *.teardown.* files under ${posixRelative(collector.root, configDir) || '.'}/ (no local Playwright to ask where the config's tests are)`,
    );
  for (const spec of specs) collector.addLocal(spec);
  return specs;
}

/** The config's `tsconfig` option (absolute), read from its source: it then applies to every file. */
function configTsconfig(config: string): string | null {
  const option = /\btsconfig\s*:\s*(['"])([^'"\n]+)\1/.exec(readFileSync(config, 'utf8'));
  return option?.[2] === undefined ? null : path.resolve(path.dirname(config), option[2]);
}

/** Plans the bundle of a project file with a `playwright:` section, asking the team's installed Playwright what it loads. */
export function planBundle(projectFile: string, section: PlaywrightSection): BundlePlan {
  const root = realpathSync(path.dirname(path.resolve(projectFile)));
  const configPath = path.resolve(root, section.config);
  const configDir = path.dirname(configPath);
  const playwrightDir = findPackageDir('@playwright/test', configDir);
  const version = playwrightDir ? readPackageJson(playwrightDir)?.version : undefined;
  const warnings: string[] = [];
  const plan = (collector: Collector, config: string): BundlePlan => ({
    root,
    config,
    files: collector.files,
    refusals: collector.refusals,
    warnings,
    playwrightVersion: typeof version === 'string' ? version : null,
  });
  if (!existsSync(configPath) || !lstatSync(configPath).isFile()) {
    const collector = new Collector(root);
    collector.refusals.push(`playwright.config: ${section.config} is not a file under ${root}`);
    return plan(collector, section.config);
  }
  const config = realpathSync(configPath);
  const configRel = posixRelative(root, config);
  const collector = new Collector(root, section.exclude ?? [], configTsconfig(config));
  if (configRel.startsWith('../')) {
    collector.refusals.push(`playwright.config: ${section.config} is outside the project file's directory ${root}`);
    return plan(collector, section.config);
  }
  collector.addLocal(config);
  const cli = playwrightDir ? playwrightCli(playwrightDir) : null;
  let tests: string[];
  if (cli) tests = addListed(collector, cli, config);
  else {
    warnings.push(
      `no @playwright/test installed above ${posixRelative(root, configDir) || '.'}/ (node_modules/@playwright/test/cli.js) to read the config with: packed the *.spec.*, *.test.*, *.setup.* and *.teardown.* files under it instead, which may not be what Playwright loads. Install the project's dependencies (npm ci) where you run \`playwright test\`, so the bundle holds exactly what it loads.`,
    );
    tests = addConventional(collector, configDir);
  }
  const includes = (section.include ?? []).map(globToRegExp);
  if (includes.length > 0)
    for (const file of walkFiles(root, SKIPPED_DIRS))
      if (includes.some((glob) => glob.test(posixRelative(root, file)))) collector.addLocal(file);
  addBaselines(collector, section.importBaselines ?? false, tests, warnings);
  collector.run();
  return plan(collector, configRel);
}
