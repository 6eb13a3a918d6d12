import path from 'node:path';
import { CHROMIUM_BASE_ARGS, CHROMIUM_DISABLED_FEATURES } from '../../browser/browser-pool';
import { INSIDE, type Layout } from './runtime';
import type { PlaywrightEvidence, PlaywrightTestRef, RunPlaywrightOptions } from './types';

/** What the wrapper config reads from /work/.testrun/options.json (no secret: headers go elsewhere). */
export interface WrapperOptions {
  configDir: string;
  reporter: string;
  resultsFile: string;
  testListFile: string;
  tests: PlaywrightTestRef[];
  workers: number;
  baseURL: string | null;
  proxy: RunPlaywrightOptions['proxy'] | null;
  retries: number | null;
  timeoutMs: number | null;
  chromium: string;
  chromiumArgs: readonly string[];
  /** Chromium features turned off, with any the team's `launchOptions.args` turn off added (one switch: Chromium keeps the last). */
  disabledFeatures: readonly string[];
  trace: string;
  video: string;
  screenshot: string;
  /**
   * How the runner is told the tests: `list`, its `--test-list` (Playwright 1.56 and later); `title`,
   * each selected project's `grep` matching exactly their title paths (older versions, which have none).
   */
  selectBy: 'list' | 'title';
}

function evidenceModes(
  evidence: PlaywrightEvidence,
  video: boolean,
): Pick<WrapperOptions, 'trace' | 'video' | 'screenshot'> {
  if (evidence === 'off') return { trace: 'off', video: 'off', screenshot: 'off' };
  if (evidence === 'on') return { trace: 'on', video: video ? 'on' : 'off', screenshot: 'on' };
  return { trace: 'retain-on-failure', video: video ? 'retain-on-failure' : 'off', screenshot: 'only-on-failure' };
}

export function wrapperOptions(
  options: RunPlaywrightOptions,
  tests: PlaywrightTestRef[],
  video: boolean,
  layout: Layout = INSIDE,
  selectBy: WrapperOptions['selectBy'] = 'list',
): WrapperOptions {
  return {
    configDir: path.posix.dirname(path.posix.join(layout.bundle, options.configFile)),
    reporter: `${layout.runtime}/reporter.js`,
    resultsFile: `${layout.state}/results.jsonl`,
    testListFile: `${layout.state}/test-list.txt`,
    tests,
    workers: options.workers ?? 1,
    baseURL: options.baseUrl ?? null,
    proxy: options.proxy ?? null,
    retries: options.retries ?? null,
    timeoutMs: options.timeoutMs ?? null,
    chromium: layout.chromium,
    // Through a proxy, loopback too goes through it (Chromium sends it direct by default), and WebRTC
    // sends no UDP of its own: the proxy is the only way to the target.
    chromiumArgs: options.proxy
      ? [
          ...CHROMIUM_BASE_ARGS,
          '--proxy-bypass-list=<-loopback>',
          '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
        ]
      : CHROMIUM_BASE_ARGS,
    disabledFeatures: CHROMIUM_DISABLED_FEATURES,
    selectBy,
    ...evidenceModes(options.evidence ?? 'retain-on-failure', video),
  };
}

/** The wrapper's file name, next to the team's config (relative paths in the config keep their meaning). */
export const WRAPPER_FILE = '.testrun.config.ts';

/**
 * The wrapper config: the team's config with what the service decides forced on it and on each
 * project (a project's `use` wins over the config's, so both get it). It also writes the test list
 * (`--test-list`), whose file paths are relative to the config's testDir, known only once loaded.
 */
export function wrapperSource(configFile: string, layout: Layout = INSIDE): string {
  const team = `./${path.posix.basename(configFile)}`;
  return `// Written by Testrun: the team's config with the service's settings.
import * as loaded from ${JSON.stringify(team)};
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// Relative paths the team's code writes and reads (a setup project's storage state) mean what they
// mean under \`npx playwright test\` run next to the project file: the bundle's root.
process.chdir(${JSON.stringify(layout.bundle)});
const o = JSON.parse(readFileSync(${JSON.stringify(`${layout.state}/options.json`)}, 'utf8'));
const team: any = (loaded as any).default ?? loaded;
const base: any = team.default ?? team;

function forced(use: any = {}, parent: any = {}) {
  const launch = { ...(parent.launchOptions ?? {}), ...(use.launchOptions ?? {}) };
  const out: any = { ...use, headless: true, trace: o.trace, video: o.video, screenshot: o.screenshot };
  delete out.channel;
  delete out.connectOptions;
  const own: string[] = launch.args ?? [];
  const off = (arg: string) => arg.startsWith('--disable-features=');
  const features = [...o.disabledFeatures, ...own.filter(off).flatMap((arg) => arg.slice(arg.indexOf('=') + 1).split(','))];
  const args = [...own.filter((arg) => !off(arg)), ...o.chromiumArgs, '--disable-features=' + [...new Set(features)].join(',')];
  out.launchOptions = { ...launch, executablePath: o.chromium, args };
  if (o.baseURL) out.baseURL = o.baseURL;
  if (o.proxy) out.proxy = o.proxy;
  return out;
}

const rootDir = path.resolve(o.configDir, base.testDir ?? '.');
writeFileSync(o.testListFile, o.tests.map((t: any) =>
  ['[' + t.project + ']', path.relative(rootDir, path.join(${JSON.stringify(layout.bundle)}, t.file)), ...t.titlePath].join(' \\u203a ')
).join('\\n') + '\\n');

// Playwright before 1.56 has no --test-list: a selected project's grep then matches the selected
// tests' title paths exactly (Playwright matches a test's titlePath() joined by spaces: project,
// file, describes and title, after the root's empty title in some versions, not in others).
const files = o.tests.map((t: any) => path.relative(rootDir, path.join(${JSON.stringify(layout.bundle)}, t.file)));
const bare = (title: string) => title.replace(/^ +/, '');
function selected(project: string | undefined) {
  if (o.selectBy !== 'title') return undefined;
  const name = project ?? '';
  const wanted = new Set(o.tests.flatMap((t: any, i: number) => t.project === name ? [bare([name, files[i], ...t.titlePath].join(' '))] : []));
  if (wanted.size === 0) return undefined;
  return new (class extends RegExp { test(title: string) { return wanted.has(bare(title)); } })('^$');
}

const clean = (obj: any) => Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
const retries = (value: any) => (o.retries ?? value);
const timeout = (value: any) => (o.timeoutMs ?? value);

const { webServer: _ignored, ...rest } = base;

export default clean({
  ...rest,
  reporter: [[o.reporter, { mode: 'run', file: o.resultsFile, root: ${JSON.stringify(layout.bundle)} }]],
  workers: o.workers,
  outputDir: ${JSON.stringify(layout.output)},
  retries: retries(base.retries),
  timeout: timeout(base.timeout),
  use: forced(base.use),
  grep: base.projects ? base.grep : (selected(undefined) ?? base.grep),
  projects: base.projects?.map((p: any) => clean({
    ...p,
    grep: selected(p.name) ?? p.grep,
    outputDir: ${JSON.stringify(layout.output)},
    retries: retries(p.retries),
    timeout: timeout(p.timeout),
    use: forced(p.use, base.use),
  })),
});
`;
}
