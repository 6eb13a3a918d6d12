/**
 * `pnpm bench parity --repo DIR --config PATH --base-url URL --file testrun.yaml [--suite SLUG]
 * [--env NAME=VALUE]… [--worker-env NAME=VALUE]… [--playwright-report FILE] [--slots N]`: proves the service on a Playwright suite nobody here wrote.
 *
 * 1. `playwright test` in DIR on its config (the repository's own @playwright/test, the machine's
 *    Chromium, a JSON report): each test's outcome and duration (playwright-side.ts).
 * 2. A private Testrun stack; DIR deployed unchanged with the project file added for the deploy
 *    only, and the suite run against URL, the app the operator started (service-side.ts).
 * 3. Each test's outcome on both sides, the wall times, and an exit status that fails on any
 *    mismatch, or when DIR's `git status` differs afterwards: the harness never changes it.
 *
 * `--env` reaches both sides: `playwright test`'s environment and the suite run's `variables`. The
 * `playwright test` side gets CI=1 unless `--env CI=…` says otherwise, as the service's runs do.
 * `--playwright-report FILE` keeps the JSON report in FILE; when FILE exists already, the `playwright
 * test` side is read from it instead of run again (to try the service's side once more).
 * `--worker-env` goes to the worker's own environment (an operator's setting, PLAYWRIGHT_CODE_CACHE=off).
 * It writes no docs: what it prints is the result (docs/PARITY.md).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import type { PlaywrightSelector } from '@testrun/contracts';
import { compare, formatTable } from './compare';
import { compareJunit, readJunit } from './junit-compare';
import { keptPlaywrightSide, runPlaywrightSide } from './playwright-side';
import { runServiceSide, type Deployed, type StackSuite } from './service-side';

interface Options {
  repo: string;
  config: string;
  baseUrl: string;
  file: string;
  suite?: string;
  env: Record<string, string>;
  workerEnv: Record<string, string>;
  playwrightReport?: string;
  viewShots?: string;
  slots: number;
}

const USAGE =
  'usage: pnpm bench parity --repo DIR --config PATH --base-url URL --file testrun.yaml [--suite SLUG] [--env NAME=VALUE]... [--worker-env NAME=VALUE]... [--playwright-report FILE] [--view-shots DIR] [--slots N]';

/** The command line after `parity`. */
export function parseArgs(argv: readonly string[]): Options {
  const got: Record<string, string> = {};
  const maps: Record<string, Record<string, string>> = { env: {}, 'worker-env': {} };
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i] ?? '', argv[i + 1]];
    if (!name.startsWith('--') || value === undefined) throw new Error(`${USAGE}\n(at "${name}")`);
    const map = maps[name.slice(2)];
    if (map) {
      const eq = value.indexOf('=');
      if (eq <= 0) throw new Error(`${name} takes NAME=VALUE, got "${value}"`);
      map[value.slice(0, eq)] = value.slice(eq + 1);
    } else got[name.slice(2)] = value;
  }
  const { repo, config, file } = got;
  const baseUrl = got['base-url'];
  if (!repo || !config || !baseUrl || !file) throw new Error(USAGE);
  const slots = Number(got.slots ?? 2);
  if (!Number.isInteger(slots) || slots < 1) throw new Error('--slots takes a whole number from 1');
  const env = maps.env ?? {};
  const workerEnv = maps['worker-env'] ?? {};
  return {
    repo: path.resolve(repo),
    config,
    baseUrl,
    file: path.resolve(file),
    suite: got.suite,
    env,
    workerEnv,
    slots,
    playwrightReport: got['playwright-report'] === undefined ? undefined : path.resolve(got['playwright-report']),
    viewShots: got['view-shots'] === undefined ? undefined : path.resolve(got['view-shots']),
  };
}

/** `git status` of the repository, ignored files included; null when it is not a git work tree. */
export function gitStatus(repo: string): string | null {
  const run = spawnSync('git', ['-C', repo, 'status', '--porcelain', '--ignored'], { encoding: 'utf8' });
  return run.status === 0 ? run.stdout : null;
}

interface ProjectYaml {
  slug: string;
  playwright?: { config?: string };
  suites?: { slug: string; playwright?: PlaywrightSelector }[];
}

/**
 * Where the project file sits for the deploy: inside the repository as it is, else copied to the
 * repository's root around the CLI's deploy only (and removed after, whatever happened).
 */
export function placeProjectFile(
  repo: string,
  file: string,
): { at: string; deploy: (run: () => Promise<Deployed>) => Promise<Deployed> } {
  const inside = !path.relative(repo, file).startsWith('..');
  const at = inside ? file : path.join(repo, path.basename(file));
  if (!inside && existsSync(at)) throw new Error(`${at} exists: pass it as --file, or remove it`);
  const deploy = async (run: () => Promise<Deployed>): Promise<Deployed> => {
    if (inside) return run();
    copyFileSync(file, at);
    try {
      return await run();
    } finally {
      rmSync(at, { force: true });
    }
  };
  return { at, deploy };
}

/** The project file's slug, and the suite to run: `--suite`, else its first Playwright suite. */
export function readProject(
  options: Options,
  at: string,
): { slug: string; suite: string; selector: PlaywrightSelector } {
  const project = parse(readFileSync(options.file, 'utf8')) as ProjectYaml;
  const config = project.playwright?.config;
  if (!config || path.resolve(path.dirname(at), config) !== path.resolve(options.repo, options.config))
    throw new Error(`${options.file}: playwright.config must name --config (${options.config}) relative to ${at}`);
  const suite = (project.suites ?? []).find((s) => s.playwright && (!options.suite || s.slug === options.suite));
  if (!suite?.playwright) throw new Error(`${options.file}: no Playwright suite ${options.suite ?? ''}`.trim());
  return { slug: project.slug, suite: suite.slug, selector: suite.playwright };
}

/** The suite as both harnesses run it on their stack: the options' target, variables and slots, the project file where `placed` put it. */
export function stackSuite(
  options: Options,
  project: { slug: string; suite: string },
  placed: ReturnType<typeof placeProjectFile>,
): StackSuite {
  return {
    projectFile: placed.at,
    projectSlug: project.slug,
    suiteSlug: project.suite,
    baseUrl: options.baseUrl,
    variables: options.env,
    workerEnv: options.workerEnv,
    slots: options.slots,
    deploy: placed.deploy,
  };
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export async function run(): Promise<void> {
  const options = parseArgs(process.argv.slice(3));
  const out = (line: string) => process.stdout.write(`${line}\n`);
  // The project file goes where a team would add it: the repository's root, unless it is already in it.
  const placed = placeProjectFile(options.repo, options.file);
  const project = readProject(options, placed.at);
  const before = gitStatus(options.repo);
  const work = mkdtempSync(path.join(tmpdir(), 'testrun-parity-'));
  try {
    out(`playwright test: ${options.repo}, ${options.config}, suite ${project.suite}'s selection …`);
    const kept = options.playwrightReport;
    const pw =
      kept && existsSync(kept)
        ? keptPlaywrightSide(kept)
        : await runPlaywrightSide({
            cwd: options.repo,
            config: options.config,
            selector: project.selector,
            env: options.env,
            work,
            reportFile: kept,
          });
    for (const error of pw.errors) out(`playwright test: error: ${error}`);
    const ran = pw.exitCode === null ? `read from ${kept ?? ''}` : `exit ${pw.exitCode}`;
    out(`playwright test ${pw.version}: ${pw.tests.length} tests, ${ran}, ${secs(pw.wallMs)}`);

    out(`testrun: deploying ${path.relative(options.repo, placed.at)} and running suite ${project.suite} …`);
    const sv = await runServiceSide({
      ...stackSuite(options, project, placed),
      junitFile: path.join(work, 'testrun.junit.xml'),
      viewShots: options.viewShots,
    });
    out(sv.deployOutput.trimEnd());
    out(sv.runOutput.trimEnd());
    for (const file of sv.shots) out(`view: ${file}`);

    const rows = compare(options.repo, pw.tests, sv.tests, pw.setupProjects);
    out('');
    out(formatTable(rows));
    const messages = new Set(sv.tests.flatMap((t) => (t.status === 'error' && t.message ? [t.message] : [])));
    if (messages.size) out(`\nThe service's distinct error messages (${messages.size}):`);
    for (const message of [...messages].slice(0, 10)) out(message.split('\n').slice(0, 15).join('\n') + '\n');
    const mismatches = rows.filter((r) => r.match === 'no').length;
    const junit = existsSync(pw.junitFile) ? compareJunit(readJunit(pw.junitFile), readJunit(sv.junitFile)) : null;
    if (junit) {
      out(
        `\nJUnit: ${junit.same} of ${junit.playwright} of Playwright's test cases written alike by testrun run --junit (${junit.testrun} cases)`,
      );
      for (const line of junit.differences.slice(0, 40)) out(`  ${line}`);
    } else out(`\nJUnit: Playwright's was not kept (${pw.junitFile}); not compared`);
    out('');
    out(`playwright test ${pw.version}: ${pw.tests.length} tests in ${secs(pw.wallMs)} (${ran})`);
    out(
      `testrun: deploy ${secs(sv.deployMs)}, suite run ${secs(sv.wallMs)} (${sv.status}, ${sv.tests.length} runs, ${options.slots} worker slots)`,
    );
    out(`${rows.length - mismatches} of ${rows.length} tests match, ${mismatches} mismatched`);
    const after = gitStatus(options.repo);
    if (before === null) out(`${options.repo} is not a git work tree: its state was not checked`);
    else if (after !== before)
      throw new Error(`${options.repo} changed: git status was\n${before}and is now\n${after ?? ''}`);
    else out(`${options.repo}: git status unchanged`);
    if (mismatches > 0 || rows.length === 0) throw new Error(`${mismatches} of ${rows.length} tests mismatched`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
