import path from 'node:path';
import { playwrightTestKey } from '@testrun/contracts';
import { readScratchFile } from '../../../sandbox';
import type { ConfigRecord, ErrorLineRecord, ListedTestRecord } from '../inside/protocol';
import { readLine } from '../inside/protocol-read';
import { layoutOf, playwrightEnv, prepareScratch, runPlaywrightCli } from './sandboxed-cli';
import { keepTransformCache, seedTransformCache } from '../caches/transform-cache';
import type { BundleOptions, DiscoveredProject, DiscoveredTest, Discovery, PlaywrightBrowser } from './types';
import { SERVICE_VERSION_ONLY, type ChosenPlaywright, type PlaywrightVersions } from './versions';

/** What the reporter writes when listing (inside/protocol.ts). */
type ListLine = ConfigRecord | ListedTestRecord | ErrorLineRecord;

/** The most of the test list the worker reads: about 200 bytes a test, so far more than a project has. */
const MAX_LIST_BYTES = 64 * 1024 * 1024;

const BROWSERS = new Set(['chromium', 'firefox', 'webkit']);

function browserOf(name: string): PlaywrightBrowser {
  return (BROWSERS.has(name) ? name : 'chromium') as PlaywrightBrowser;
}

/** Major.minor of a version (1.39 of 1.39.0). */
const minor = (version: string) => version.split('.').slice(0, 2).join('.');

/** What a deploy says of the version a bundle runs on when it is not the one it was made with. */
function versionWarning(chosen: ChosenPlaywright, versions: PlaywrightVersions): string | null {
  if (chosen.exact || chosen.pinned === null) return null;
  const have = versions.list().map((packages) => minor(packages.version));
  const range = have.length > 1 ? `${have[0] ?? ''}–${have.at(-1) ?? ''}` : (have[0] ?? '');
  return `the bundle was made with @playwright/test ${chosen.pinned}; the service has no ${minor(chosen.pinned)} (it has ${range}) and runs it on ${chosen.packages.version}, so behaviour may differ`;
}

/** The lines the list reporter wrote, as discovery's answer. */
function discoveryOf(lines: ListLine[]): Discovery {
  const errors = lines.flatMap((line) => (line.type === 'error' ? [line.error.message] : []));
  if (errors.length > 0) return { error: errors.join('\n\n') };
  const config = lines.find((line) => line.type === 'config');
  if (!config) return { error: 'the Playwright config did not load' };
  const projects: DiscoveredProject[] = config.projects.map((project) => ({
    name: project.name,
    dependencies: project.dependencies,
    browser: browserOf(project.browser),
  }));
  const setupProjects = new Set(projects.flatMap((project) => project.dependencies));
  const browsers = new Map(projects.map((project) => [project.name, project.browser]));
  const tests: DiscoveredTest[] = lines
    .filter((line) => line.type === 'test')
    .map((line) => ({
      file: line.file,
      line: line.line,
      column: line.column,
      titlePath: line.titlePath,
      project: line.project,
      tags: line.tags,
      browser: browsers.get(line.project) ?? 'chromium',
      setup: setupProjects.has(line.project),
      ...(line.parallel ? { parallel: true } : {}),
    }));
  const warnings = config.webServer
    ? ['the config starts a webServer: the service ignores it and runs the tests against the baseUrl']
    : [];
  const workers = config.workers === null ? {} : { workers: config.workers };
  return { tests, projects, warnings, ...workers, ...reportRoot(config.rootDir) };
}

/** `{rootDir}` when the config's is a folder inside the bundle other than its root; else nothing. */
function reportRoot(rootDir: string | undefined): { rootDir?: string } {
  if (!rootDir || rootDir === '.' || rootDir.startsWith('..') || path.posix.isAbsolute(rootDir)) return {};
  return { rootDir };
}

/** The list's lines as records; a line the protocol refuses (the sandbox wrote it) fails the whole list. */
function parseLines(text: string): ListLine[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((raw) => {
      const line = readLine(raw);
      if (line === null) throw new Error('a line of the test list is not a record of the reporter');
      return line.type === 'config' || line.type === 'test' || line.type === 'error' ? [line] : [];
    });
}

/**
 * Lists the tests of the team's Playwright project: `playwright test --list` in the sandbox (no
 * network), with the @playwright/test the bundle runs on (versions.ts) and a reporter of ours that writes each test's file,
 * title path, project, tags and browser. `{ error }` when the config or a spec does not load.
 */
export async function discoverTests(options: BundleOptions): Promise<Discovery> {
  const versions = options.versions ?? SERVICE_VERSION_ONLY;
  const chosen = await versions.forBundle(options.bundleDir);
  await prepareScratch(options.bundleDir, options.scratchDir, options.isolation, chosen.packages);
  await seedTransformCache(options.transformCache, options.scratchDir);
  const layout = layoutOf(options.isolation ?? 'sandbox', options.scratchDir);
  const config = path.posix.join(layout.bundle, options.configFile);
  // Our reporter, given on the command line, lists to <state>/list.jsonl (its defaults).
  const result = await runPlaywrightCli(
    'list',
    { ...options, packages: chosen.packages },
    ['test', '--list', '--config', config, '--reporter', `${layout.runtime}/reporter.js`],
    playwrightEnv({}, layout),
    'none',
  );
  if (result.aborted) return { error: 'discovery was cancelled' };
  await keepTransformCache(options.scratchDir, options.transformCache);
  if (result.limit !== null) return { error: `discovery hit the sandbox's ${result.limit} limit` };
  let lines: ListLine[];
  try {
    // The sandbox wrote it: read through no link, within the scratch directory, bounded.
    lines = parseLines((await readScratchFile(options.scratchDir, '.testrun/list.jsonl', MAX_LIST_BYTES)).toString());
  } catch {
    return { error: (result.stderr || result.stdout).trim() || `playwright exited with ${result.exitCode}` };
  }
  const discovery = discoveryOf(lines);
  if ('error' in discovery) return discovery;
  const warning = versionWarning(chosen, versions);
  if (warning === null || chosen.pinned === null) return discovery;
  const gap = { bundle: chosen.pinned, service: chosen.packages.version };
  return { ...discovery, warnings: [...discovery.warnings, warning], versions: gap };
}

/** The key discovery gives a test (contracts' playwrightTestKey: results and stored tests agree by it). */
export { playwrightTestKey };
