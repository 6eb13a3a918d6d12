import picomatch from 'picomatch';
import type { ImportedBaseline } from '../visual/baselines';
import { sourceDigests } from './sources';
import {
  playwrightTestKey,
  playwrightTestName,
  selectPlaywrightTests,
  type DiscoveryResult,
  type PlaywrightDefinition,
  type PlaywrightSelector,
  type ProblemFieldError,
  type ProjectFile,
} from '@testrun/contracts';

// A project file's Playwright suites made into tests: discovery (in a worker's sandbox) lists the
// bundle's tests, each suite's selector picks its own, and every picked test becomes a test of the
// project (one, whichever suites pick it) whose stored definition names it in the bundle
// (docs/PLAYWRIGHT.md).

/** The project file's `playwright:` section, as far as the service reads it here. */
type PlaywrightSection = {
  config: string;
  versionMismatch?: 'warn' | 'refuse';
  importBaselines?: boolean | string[];
  missingBaselines?: 'pass' | 'fail';
};

/** A suite of the file as its Playwright fields are read here. */
type SuiteFields = { slug: string; playwright?: PlaywrightSelector; tests?: unknown[] };

/** The file's Playwright section, or null for a file of step tests only. */
export function playwrightSection(file: ProjectFile): PlaywrightSection | null {
  const section = (file as { playwright?: PlaywrightSection }).playwright;
  return section ?? null;
}

/** Matches a file path of the bundle against a glob of the project file (`**` crosses folders). */
export function matchesBundleGlob(file: string, glob: string): boolean {
  return picomatch(glob.replace(/^\.\//, ''), { dot: true })(file);
}

/**
 * A valid file with its Playwright suites' tests filled in, the bundle they come from, discovery's
 * warnings, and the baselines it imports from the bundle (import-baselines.ts), their images stored.
 */
export type ExpandedFile = {
  file: ProjectFile;
  bundle: string | null;
  warnings: string[];
  baselines?: ImportedBaseline[];
};

export type Expanded = ExpandedFile | { errors: ProblemFieldError[] };

/**
 * The file with every Playwright suite's tests filled in from `discovery` (the rest unchanged),
 * or the errors that make it undeployable: a bundle that does not load, a suite that selects no test.
 * `texts` holds the bundle's spec files (readBundleTexts): each test of them keeps its own source's
 * digest, which tells a change of the test from a change elsewhere in its file.
 */
export function expandPlaywrightSuites(
  file: ProjectFile,
  bundle: string,
  discovery: DiscoveryResult,
  texts: ReadonlyMap<string, string> = new Map(),
): Expanded {
  const section = playwrightSection(file);
  if (!section) return { file, bundle: null, warnings: [] };
  if ('error' in discovery)
    return { errors: [{ path: '/playwright/config', message: `does not load in the sandbox: ${discovery.error}` }] };
  if (discovery.versions && section.versionMismatch === 'refuse') {
    const { bundle: theirs, service } = discovery.versions;
    const message = `the bundle was made with @playwright/test ${theirs}, and the service runs ${service}: pin @playwright/test ${service} (its major.minor) to deploy, or set versionMismatch: warn to run on ${service}`;
    return { errors: [{ path: '/playwright/versionMismatch', message }] };
  }
  const errors: ProblemFieldError[] = [];
  const sources = sourceDigests(discovery.tests, texts);
  const suites = (file.suites as SuiteFields[]).map((suite, s) => {
    if (!suite.playwright) return suite;
    const picked = selectPlaywrightTests(suite.playwright, discovery.tests, matchesBundleGlob);
    if (picked.length === 0)
      errors.push({ path: `/suites/${s}/playwright`, message: 'selects none of the bundle’s Playwright tests' });
    const tests = picked.map((test) => {
      const definition: PlaywrightDefinition = {
        playwright: {
          bundle,
          config: section.config,
          file: test.file,
          line: test.line,
          column: test.column,
          titlePath: test.titlePath,
          project: test.project,
          browser: test.browser,
          tags: test.tags,
          ...(test.parallel ? { parallel: true } : {}),
          ...(discovery.workers !== undefined ? { workers: discovery.workers } : {}),
          ...(sources.has(test) ? { source: sources.get(test) } : {}),
          ...(discovery.rootDir !== undefined ? { rootDir: discovery.rootDir } : {}),
          ...(section.missingBaselines === 'fail' ? { missingBaselines: 'fail' as const } : {}),
        },
      };
      return { key: playwrightTestKey(test), name: playwrightTestName(test).slice(0, 200), steps: definition };
    });
    return { ...suite, tests: dedupeByKey(tests) };
  });
  if (errors.length > 0) return { errors };
  return { file: { ...file, suites: suites as ProjectFile['suites'] }, bundle, warnings: discovery.warnings };
}

/** Two tests with one file, title path and project (a loop declaring the same title): the first one stays. */
function dedupeByKey<T extends { key: string }>(tests: T[]): T[] {
  const seen = new Set<string>();
  return tests.filter((t) => !seen.has(t.key) && seen.add(t.key));
}
