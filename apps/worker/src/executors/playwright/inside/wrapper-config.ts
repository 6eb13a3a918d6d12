/*
 * Runs INSIDE the sandbox, as the config the runner loads: the team's config with what the service
 * decides forced on it and on each project (a project's `use` wins over the config's, so both get
 * it). The file the worker writes next to the team's config (../runner/wrapper-config.ts, wrapperSource)
 * imports the team's module and hands it here with the path of the options (protocol.ts,
 * WrapperOptions). It also writes the test list (`--test-list`), whose file paths are relative to
 * the config's testDir, known only once loaded.
 * It imports nothing but Node and its neighbours: the worker's modules are not in the sandbox.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseWrapperOptions, type WrapperOptions, type WrapperTest } from './protocol';

/** A config, a project or its `use`, as the team wrote it: any shape, read field by field. */
type Fields = Record<string, unknown>;

const fieldsOf = (value: unknown): Fields => (typeof value === 'object' && value !== null ? (value as Fields) : {});
const stringsOf = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

/**
 * The Chromium a headless run launches, as Playwright chooses it: its headless shell, unless the
 * config names a channel (`chromium`, `chrome`, `msedge`…), which runs a full browser's new
 * headless mode; Debian's full Chromium stands in for every channel.
 */
function executableOf(o: WrapperOptions, channel: unknown): string {
  const full = typeof channel === 'string' && channel !== '' && channel !== 'chromium-headless-shell';
  return full || o.headlessShell === null ? o.chromium : o.headlessShell;
}

/** A `use` with the service's settings forced on it, over its parent's launch options. */
function forced(o: WrapperOptions, use: Fields = {}, parent: Fields = {}): Fields {
  const launch = { ...fieldsOf(parent.launchOptions), ...fieldsOf(use.launchOptions) };
  const out: Fields = { ...use, headless: true, trace: o.trace, video: o.video, screenshot: o.screenshot };
  delete out.channel;
  delete out.connectOptions;
  const own = stringsOf(launch.args);
  const off = (arg: string) => arg.startsWith('--disable-features=');
  const features = [
    ...o.disabledFeatures,
    ...own.filter(off).flatMap((arg) => arg.slice(arg.indexOf('=') + 1).split(',')),
  ];
  const args = [
    ...own.filter((arg) => !off(arg)),
    ...o.chromiumArgs,
    '--disable-features=' + [...new Set(features)].join(','),
  ];
  out.launchOptions = { ...launch, executablePath: executableOf(o, use.channel ?? parent.channel), args };
  if (o.baseURL) out.baseURL = o.baseURL;
  if (o.proxy) out.proxy = o.proxy;
  return out;
}

/** A selected test's file relative to the config's root folder (its testDir). */
const fileOf = (o: WrapperOptions, rootDir: string, test: WrapperTest) =>
  path.relative(rootDir, path.join(o.bundleDir, test.file));

/** Writes the `--test-list` file: a line per selected test, `[project] › file › title path`. */
function writeTestList(o: WrapperOptions, rootDir: string): void {
  const lines = o.tests.map((t) => [`[${t.project}]`, fileOf(o, rootDir, t), ...t.titlePath].join(' \u203a '));
  writeFileSync(o.testListFile, lines.join('\n') + '\n');
}

const bare = (title: string) => title.replace(/^ +/, '');

/**
 * Playwright before 1.56 has no --test-list: a selected project's grep then matches the selected
 * tests' title paths exactly (Playwright matches a test's titlePath() joined by spaces: project,
 * file, describes and title, after the root's empty title in some versions, not in others). A
 * project the run needs without selecting a test of it (a setup project a selected one depends on,
 * or a teardown) keeps its own grep (undefined); any other project matches nothing, so that none of
 * its tests runs. Undefined with `--test-list`.
 */
function selector(
  o: WrapperOptions,
  rootDir: string,
  needed: ReadonlySet<string>,
): (project: string | undefined) => RegExp | undefined {
  const files = o.tests.map((t) => fileOf(o, rootDir, t));
  return (project) => {
    if (o.selectBy !== 'title') return undefined;
    const name = project ?? '';
    const wanted = new Set(
      o.tests.flatMap((t, i) => (t.project === name ? [bare([name, files[i] ?? '', ...t.titlePath].join(' '))] : [])),
    );
    if (wanted.size === 0) return needed.has(name) ? undefined : MATCHES_NOTHING;
    return new (class extends RegExp {
      override test(title: string): boolean {
        return wanted.has(bare(title));
      }
    })('^$');
  };
}

/** A grep no title matches: a project the run does not need runs none of its tests. */
const MATCHES_NOTHING = /(?!)/;

const names = (value: unknown): string[] =>
  (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');

/** The projects of the selected tests, with the projects they depend on and their teardowns, all the way down. */
function neededProjects(o: WrapperOptions, projects: readonly Fields[] | undefined): Set<string> {
  const byName = new Map((projects ?? []).map((p) => [typeof p.name === 'string' ? p.name : '', p]));
  const needed = new Set<string>();
  const add = (name: string): void => {
    if (needed.has(name)) return;
    needed.add(name);
    const project = byName.get(name);
    for (const next of [...names(project?.dependencies), ...names(project?.teardown)]) add(next);
  };
  for (const t of o.tests) add(t.project);
  return needed;
}

/** The object without its undefined fields (Playwright's config validation rejects some as given). */
const clean = (obj: Fields): Fields => Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));

/** The config the runner runs: `loaded`, the team's config module, under the options in `optionsFile`. */
export function wrapConfig(loaded: unknown, optionsFile: string): Fields {
  const o = parseWrapperOptions(readFileSync(optionsFile, 'utf8'));
  // Relative paths the team's code writes and reads (a setup project's storage state) mean what they
  // mean under `npx playwright test` run next to the project file: the bundle's root.
  process.chdir(o.bundleDir);
  const team = fieldsOf(loaded).default ?? loaded;
  const base = fieldsOf(fieldsOf(team).default ?? team);
  const rootDir = path.resolve(o.configDir, typeof base.testDir === 'string' ? base.testDir : '.');
  writeTestList(o, rootDir);
  const retries = (value: unknown) => o.retries ?? value;
  const timeout = (value: unknown) => o.timeoutMs ?? value;
  // The service tests a running target; and its baselines change by approval, not by the run
  // (docs/VISUAL.md): Playwright's own default writes a missing snapshot and fails, never overwrites.
  const { webServer: _ignored, updateSnapshots: _approved, ...rest } = base;
  const baseUse = fieldsOf(base.use);
  const projects = Array.isArray(base.projects) ? (base.projects as unknown[]).map(fieldsOf) : undefined;
  const selected = selector(o, rootDir, neededProjects(o, projects));
  return clean({
    ...rest,
    reporter: [[o.reporter, { mode: 'run', file: o.resultsFile, root: o.bundleDir }]],
    workers: o.workers,
    outputDir: o.outputDir,
    retries: retries(base.retries),
    timeout: timeout(base.timeout),
    use: forced(o, baseUse),
    grep: projects ? base.grep : (selected(undefined) ?? base.grep),
    projects: projects?.map((p) =>
      clean({
        ...p,
        grep: selected(typeof p.name === 'string' ? p.name : undefined) ?? p.grep,
        outputDir: o.outputDir,
        retries: retries(p.retries),
        timeout: timeout(p.timeout),
        use: forced(o, fieldsOf(p.use), baseUse),
      }),
    ),
  });
}
