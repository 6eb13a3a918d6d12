/**
 * The `playwright test` side of the parity harness: the repository's own `@playwright/test` run in
 * its own folder on its own config, with nothing written inside the repository. The JSON report
 * goes to a file of ours (`--reporter=json` and the report's file variable), the output folder to
 * one of ours (`--output`), and the browser is the machine's Chromium, reached from outside: a
 * PLAYWRIGHT_BROWSERS_PATH of ours whose browser executables, where that Playwright looks for
 * them, are links to it. The config is loaded as it is.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import type { PlaywrightSelector } from '@testrun/contracts';
import { runTimed } from '../h2h/cpu';
import { CHROMIUM, HEADLESS_SHELL } from '../h2h/service';

/** Playwright's JSON report status of a test (its last try's verdict against its expectation). */
type PlaywrightOutcome = 'expected' | 'unexpected' | 'flaky' | 'skipped';

/** One test as `playwright test` reported it. */
export interface PlaywrightResult {
  /** Absolute path of its spec file. */
  file: string;
  project: string;
  /** Describe titles then its title. */
  titlePath: string[];
  outcome: PlaywrightOutcome;
  /** Its last try's status (passed, failed, timedOut, skipped, interrupted). */
  status: string;
  /** Every try's duration, summed. */
  durationMs: number;
  tries: number;
  /** The first line of its last try's error, if any. */
  error?: string;
  /** When its first try began, and its last ended (ms since the epoch; the report's startTime and duration). */
  startedAt?: number;
  endedAt?: number;
}

export interface PlaywrightSide {
  version: string;
  /** Playwright's junit reporter's file, written beside the JSON report. */
  junitFile: string;
  tests: PlaywrightResult[];
  /** Projects that another project lists in `dependencies` or names as its teardown. */
  setupProjects: Set<string>;
  wallMs: number;
  /** When the command was spawned (ms since the epoch). */
  spawnedAt?: number;
  /** CPU of its whole process tree (runner, workers, browsers); 0 for a kept report. */
  cpuMs: number;
  exitCode: number | null;
  /** The command's last lines: what a run that reported nothing said. */
  tail: string;
  /** The report's errors outside any test (a config that does not load, a filter that matches nothing). */
  errors: string[];
}

interface ReportSuite {
  title: string;
  suites?: ReportSuite[];
  specs?: {
    title: string;
    file: string;
    tests: {
      projectName: string;
      status: PlaywrightOutcome;
      results: { status: string; duration: number; startTime?: string; error?: { message?: string } }[];
    }[];
  }[];
}
interface Report {
  errors?: { message?: string }[];
  config: { rootDir: string; projects: { name: string; dependencies?: string[]; teardown?: string }[] };
  suites: ReportSuite[];
}

/** The `@playwright/test` the repository resolves from `configDir`: its CLI and version. */
function repositoryPlaywright(configDir: string): { cli: string; version: string; packageDir: string } {
  let pkg: string;
  try {
    pkg = require.resolve('@playwright/test/package.json', { paths: [configDir] });
  } catch {
    throw new Error(`no @playwright/test resolves from ${configDir}: install the repository's dependencies first`);
  }
  const packageDir = path.dirname(pkg);
  const { version } = JSON.parse(readFileSync(pkg, 'utf8')) as { version: string };
  return { cli: path.join(packageDir, 'cli.js'), version, packageDir };
}

/**
 * A browsers folder for the Playwright of `packageDir`: that Playwright's registry (an internal
 * module, found where 1.3x and 1.6x keep it) says where it expects Chromium (and, from 1.49, its
 * headless shell) under PLAYWRIGHT_BROWSERS_PATH=`dir`; each becomes a link to the machine's
 * Chromium, the headless shell to Debian's headless shell when there is one.
 */

function linkChromium(packageDir: string, dir: string): string[] {
  const script = `
const path = require('node:path');
const core = path.dirname(require.resolve('playwright-core/package.json', { paths: [${JSON.stringify(packageDir)}] }));
// Its own module before 1.5x; since, part of lib/coreBundle.js.
const old = path.join(core, 'lib', 'server', 'registry', 'index.js');
const registry = require('node:fs').existsSync(old)
  ? require(old).registry
  : require(path.join(core, 'lib', 'coreBundle.js')).registry.registry;
const out = [];
for (const name of ['chromium', 'chromium-headless-shell']) {
  const found = registry.findExecutable(name);
  const at = found && found.executablePath('javascript');
  if (at) out.push([name, at]);
}
process.stdout.write(JSON.stringify(out));`;
  const asked = spawnSync(process.execPath, ['-e', script], {
    env: { ...process.env, PLAYWRIGHT_BROWSERS_PATH: dir },
    encoding: 'utf8',
  });
  if (asked.status !== 0) throw new Error(`cannot read that Playwright's browser registry:\n${asked.stderr}`);
  const full = realpathSync(existsSync('/usr/lib/chromium/chromium') ? '/usr/lib/chromium/chromium' : CHROMIUM);
  // Playwright's headless shell is Debian's when the machine has it, as the service's worker runs it.
  const shell = existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : full;
  const found = JSON.parse(asked.stdout) as [string, string][];
  for (const [name, at] of found) {
    if (existsSync(at)) continue;
    mkdirSync(path.dirname(at), { recursive: true });
    symlinkSync(name === 'chromium-headless-shell' ? shell : full, at);
  }
  return found.map(([, at]) => at);
}

/** A glob of a suite's `files` as a `playwright test` file filter (a regular expression on the path). */
export function globToFilter(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '*' && glob[i + 1] === '*') {
      out += '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return `${out}$`;
}

/**
 * The `playwright test` arguments that select what a suite's selector selects: file filters first
 * (before 1.4x, `--project` takes every word after it).
 */
export function selectorArgs(selector: PlaywrightSelector): string[] {
  const args = (selector.files ?? []).map(globToFilter);
  if (selector.project !== undefined) args.push('--project', selector.project);
  if (selector.grep !== undefined) args.push('--grep', selector.grep);
  if (selector.grepInvert !== undefined) args.push('--grep-invert', selector.grepInvert);
  return args;
}

/** When a test's first try began and its last ended, where the report gives start times. */
function tryTimes(results: readonly { duration: number; startTime?: string }[]): {
  startedAt?: number;
  endedAt?: number;
} {
  const [first, last] = [results[0]?.startTime, results.at(-1)];
  if (first === undefined || last?.startTime === undefined) return {};
  return { startedAt: Date.parse(first), endedAt: Date.parse(last.startTime) + last.duration };
}

/** Terminal colours (ESC [ … m) in Playwright's messages. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** Each test of a JSON report, its file made absolute. */
export function readReport(text: string): { tests: PlaywrightResult[]; setupProjects: Set<string>; errors: string[] } {
  const report = JSON.parse(text) as Report;
  const tests: PlaywrightResult[] = [];
  const walk = (suite: ReportSuite, titles: string[]) => {
    for (const spec of suite.specs ?? [])
      for (const test of spec.tests) {
        const last = test.results.at(-1);
        const error = last?.error?.message
          ?.replace(ANSI, '')
          .split('\n')
          .find((line) => line.trim() !== '');
        tests.push({
          file: path.resolve(report.config.rootDir, spec.file),
          project: test.projectName,
          titlePath: [...titles, spec.title],
          outcome: test.status,
          status: last?.status ?? 'none',
          durationMs: test.results.reduce((sum, r) => sum + r.duration, 0),
          tries: test.results.length,
          ...(error ? { error: error.trim() } : {}),
          ...tryTimes(test.results),
        });
      }
    for (const child of suite.suites ?? []) walk(child, [...titles, child.title]);
  };
  // The top suites are the files: their titles are no part of a test's title path.
  for (const file of report.suites) walk({ ...file, title: '' }, []);
  const setupProjects = new Set<string>();
  for (const p of report.config.projects) {
    for (const d of p.dependencies ?? []) setupProjects.add(d);
    if (p.teardown) setupProjects.add(p.teardown);
  }
  const errors = (report.errors ?? []).map((e) => (e.message ?? '').split('\n')[0] ?? '');
  return { tests, setupProjects, errors };
}

/**
 * `playwright test --config CONFIG` in `cwd` (the repository's root, where a team runs it) with
 * `env` added (CI=1 unless it says otherwise, as the service's runs see), selecting what `selector`
 * selects; each test's outcome.
 */
export async function runPlaywrightSide(options: {
  cwd: string;
  config: string;
  selector: PlaywrightSelector;
  env: Record<string, string>;
  work: string;
  /** Where the JSON report goes (default: in `work`); Playwright's JUnit goes beside it. */
  reportFile?: string;
  /** `--workers`, when given (default: the config's). */
  workers?: number;
}): Promise<PlaywrightSide> {
  const own = repositoryPlaywright(path.dirname(path.resolve(options.cwd, options.config)));
  const browsers = path.join(options.work, 'browsers');
  linkChromium(own.packageDir, browsers);
  const reportFile = options.reportFile ?? path.join(options.work, 'report.json');
  const junitFile = junitBeside(reportFile);
  rmSync(reportFile, { force: true });
  rmSync(junitFile, { force: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CI: '1',
    ...options.env,
    PLAYWRIGHT_BROWSERS_PATH: browsers,
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    // The JSON reporter's file: PLAYWRIGHT_JSON_OUTPUT_FILE from 1.41, _NAME before.
    PLAYWRIGHT_JSON_OUTPUT_FILE: reportFile,
    PLAYWRIGHT_JSON_OUTPUT_NAME: reportFile,
    PLAYWRIGHT_JUNIT_OUTPUT_FILE: junitFile,
    PLAYWRIGHT_JUNIT_OUTPUT_NAME: junitFile,
    FORCE_COLOR: '0',
  };
  // The bench's own loader flags (tsx) are no business of the repository's Node.
  if (options.env.NODE_OPTIONS === undefined) delete env.NODE_OPTIONS;
  const selection = selectorArgs(options.selector);
  const filters = selection.slice(0, options.selector.files?.length ?? 0);
  const args = [own.cli, 'test', ...filters, '--config', options.config, '--reporter=json,junit'];
  if (options.workers !== undefined) args.push(`--workers=${options.workers}`);
  args.push('--output', path.join(options.work, 'test-results'), ...selection.slice(filters.length));
  // Timed with the CPU of its process tree (a control group of its own where the machine allows one).
  const spawnedAt = Date.now();
  const ran = await runTimed('playwright', process.execPath, args, options.cwd, env);
  const [exitCode, tail] = [ran.code, ran.output.slice(-4000)];
  if (!existsSync(reportFile)) throw new Error(`playwright test wrote no report (exit ${exitCode}):\n${tail}`);
  const report = readReport(readFileSync(reportFile, 'utf8'));
  const { wallMs, cpuMs } = ran;
  return { version: own.version, junitFile, ...report, wallMs, spawnedAt, cpuMs, exitCode, tail };
}

/** Where Playwright's JUnit goes for a JSON report at `reportFile`. */
function junitBeside(reportFile: string): string {
  return `${reportFile.replace(/\.json$/, '')}.junit.xml`;
}

/** A report an earlier run kept (`--playwright-report`): its tests, and its own wall time. */
export function keptPlaywrightSide(reportFile: string): PlaywrightSide {
  const text = readFileSync(reportFile, 'utf8');
  const { config, stats } = JSON.parse(text) as { config: { version: string }; stats?: { duration?: number } };
  const junitFile = junitBeside(reportFile);
  return {
    version: config.version,
    junitFile,
    ...readReport(text),
    wallMs: stats?.duration ?? 0,
    cpuMs: 0,
    exitCode: null,
    tail: '',
  };
}
