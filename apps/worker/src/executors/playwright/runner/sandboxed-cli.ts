// The Playwright CLI as the worker starts it: in the sandbox (or, opted out, without one), where
// things are there (INSIDE, Layout), its environment, its scratch directory prepared, the process.
import { cp, mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { playwrightFfmpegPath } from '../../../run/video';
import {
  DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS,
  runSandboxed,
  runUnsandboxed,
  type SandboxLimits,
  type SandboxResult,
  type SandboxSpec,
} from '../../../sandbox';
import { hostSources, INSIDE_BUILD, sharedSources, type PlaywrightSources } from './packages';
import { TRANSFORM_DIR } from '../caches/transform-cache';
import { servicePlaywright, type PlaywrightPackages } from './versions';

/** Where things are inside the sandbox. */
export const INSIDE = {
  work: '/work',
  nodeModules: '/node_modules',
  bundle: '/work/bundle',
  state: '/work/.testrun',
  output: '/work/output',
  /** The compiled reporter and fixtures (inside/), read only. */
  runtime: '/opt/testrun/playwright',
  browsers: '/opt/testrun/browsers',
  /** Debian's Chromium binary itself: /usr/bin/chromium is a shell script that reads /etc/chromium.d, absent in the sandbox. */
  chromium: '/usr/lib/chromium/chromium',
  /**
   * Debian's headless shell (package chromium-headless-shell), which a headless run launches when the
   * host has it, as Playwright does (inside/wrapper-config.ts). The sandbox sees the host's /usr.
   */
  headlessShell: '/usr/lib/chromium/chromium-headless-shell',
} as const;

/** Where the sandbox sees the worker's control directory (interrupt.ts), read only. */
const INSIDE_CONTROL = '/opt/testrun/control';
/** Where the sandbox sees the worker's code cache of Playwright's modules (caches/code-cache.ts), read only. */
const INSIDE_CODE_CACHE = '/opt/testrun/code-cache';

/** Where each of the service's folders (packages.ts) is mounted in the sandbox, or linked without one. */
function mountsOf(sources: PlaywrightSources): { from: string; to: string }[] {
  const mounts = [
    { from: sources.test, to: `${INSIDE.nodeModules}/@playwright/test` },
    { from: sources.playwright, to: `${INSIDE.nodeModules}/playwright` },
    { from: sources.core, to: `${INSIDE.nodeModules}/playwright-core` },
    { from: sources.runtime, to: INSIDE.runtime },
  ];
  // Each Playwright version looks for ffmpeg under its own revision's folder: the one ffmpeg is there.
  if (sources.ffmpeg !== null)
    mounts.push({
      from: sources.ffmpeg,
      to: `${INSIDE.browsers}/${sources.ffmpegAs ?? path.basename(sources.ffmpeg)}`,
    });
  return mounts;
}

/**
 * What the service sets in the sandbox that a test's variables may change (docs/PLAYWRIGHT.md, "The
 * environment your config sees"). `CI` is set because teams' configs expect it where tests run
 * unattended; a request's `CI=` or `CI=0` turns their CI-only settings off. Discovery sees the same.
 */
const OVERRIDABLE_ENV: Readonly<Record<string, string>> = { CI: '1', FORCE_COLOR: '0', NO_COLOR: '1' };

/**
 * The sandbox's environment: nothing of the worker's; the test's variables over {@link OVERRIDABLE_ENV},
 * and what the service needs to work (paths, its own TESTRUN_* and PLAYWRIGHT_* settings) over both.
 */
export function playwrightEnv(
  extra: Readonly<Record<string, string>> = {},
  layout: Layout = INSIDE,
): Record<string, string> {
  return {
    ...OVERRIDABLE_ENV,
    ...extra,
    PATH: '/usr/bin:/bin',
    HOME: `${layout.work}/home`,
    TMPDIR: `${layout.work}/tmp`,
    // Where our reporter and fixture find the run's files (inside/): the sandbox's paths by default.
    TESTRUN_STATE_DIR: layout.state,
    TESTRUN_BUNDLE_DIR: layout.bundle,
    PLAYWRIGHT_BROWSERS_PATH: layout.browsers,
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    // What Playwright compiled, seeded from earlier sandboxes of the bundle (caches/transform-cache.ts).
    PLAYWRIGHT_TRANSFORM_CACHE_DIR: `${layout.work}/${TRANSFORM_DIR}`,
  };
}

/**
 * Copies the bundle into the scratch directory (the sandbox's /work/bundle, writable) and makes its
 * folders; without a sandbox, also the node_modules the sandbox would mount (links to the service's
 * packages and the shim), where Node finds them from the bundle.
 */
export async function prepareScratch(
  bundleDir: string,
  scratchDir: string,
  isolation: Isolation = 'sandbox',
  packages: PlaywrightPackages = servicePlaywright(),
): Promise<void> {
  await cp(bundleDir, path.join(scratchDir, 'bundle'), { recursive: true, verbatimSymlinks: true });
  for (const dir of ['.testrun', 'home', 'tmp', 'output']) await mkdir(path.join(scratchDir, dir), { recursive: true });
  if (isolation === 'sandbox') return;
  const { nodeModules } = layoutOf(isolation, scratchDir);
  const sources = hostSources(packages);
  for (const { from, to } of mountsOf(sources)) {
    if (!to.startsWith(`${INSIDE.nodeModules}/`)) continue;
    const link = path.join(nodeModules, to.slice(INSIDE.nodeModules.length + 1));
    await mkdir(path.dirname(link), { recursive: true });
    // The stand-in is copied: its fixture resolves playwright/test from here (packages.ts writeShim).
    if (from === sources.test) await cp(from, link, { recursive: true });
    else await symlink(from, link);
  }
}

/**
 * What a Playwright sandbox is given read only: the service's folders, copied into the worker's
 * share; the control directory and the code cache as given (the worker makes both in the share too).
 */
async function playwrightSandbox(
  kind: 'list' | 'run',
  binds: { controlDir?: string; codeCache?: string },
  packages: PlaywrightPackages,
): Promise<Pick<SandboxSpec, 'readOnlyBinds' | 'readOnlyMounts'>> {
  const control = binds.controlDir === undefined ? [] : [{ from: binds.controlDir, to: INSIDE_CONTROL }];
  const codeCache = binds.codeCache === undefined ? [] : [{ from: binds.codeCache, to: INSIDE_CODE_CACHE }];
  return {
    readOnlyBinds: [],
    readOnlyMounts: [...mountsOf(await sharedSources(kind, INSIDE.runtime, packages)), ...control, ...codeCache],
  };
}

/** A path the sandbox wrote (under /work) as the host sees it (unchanged without a sandbox). */
export function hostPath(scratchDir: string, inside: string, layout: Layout = INSIDE): string {
  return inside.startsWith(`${layout.work}/`) ? path.join(scratchDir, inside.slice(layout.work.length + 1)) : inside;
}

/** A path under the bundle as the bundle root sees it (posix); other paths unchanged. */
export function bundlePath(inside: string, layout: Layout = INSIDE): string {
  return inside.startsWith(`${layout.bundle}/`) ? inside.slice(layout.bundle.length + 1) : inside;
}

/** Where Playwright runs tenant code: in the sandbox (always, unless the operator opted out: PLAYWRIGHT_SANDBOX=off). */
export type Isolation = 'sandbox' | 'none';

/** Where the run's files, the service's packages and the browsers are, as the Playwright process sees them. */
export type Layout = { readonly [K in keyof typeof INSIDE]: string };

/** The sandbox's paths ({@link INSIDE}), or without a sandbox the host's: the scratch directory and the worker's build. */
export function layoutOf(isolation: Isolation, scratchDir: string): Layout {
  if (isolation === 'sandbox') return INSIDE;
  const ffmpeg = playwrightFfmpegPath();
  return {
    work: scratchDir,
    nodeModules: path.join(scratchDir, 'node_modules'),
    bundle: path.join(scratchDir, 'bundle'),
    state: path.join(scratchDir, '.testrun'),
    output: path.join(scratchDir, 'output'),
    runtime: INSIDE_BUILD,
    browsers: ffmpeg ? path.dirname(path.dirname(ffmpeg)) : INSIDE.browsers,
    chromium: INSIDE.chromium,
    headlessShell: INSIDE.headlessShell,
  };
}

/**
 * What the service preloads in every Node process of the sandbox, first in NODE_OPTIONS (the team's
 * kept after): the code cache's hook (caches/code-cache.ts; the service's version only, whose modules it
 * holds) and the egress hook that sends the team's Node code (fetch, http and https agents) through
 * the proxy at `egressProxy`, as its browser (inside/egress.ts). With the variables each reads.
 */
function preloadEnv(
  options: { codeCache?: string; egressProxy?: string },
  layout: Layout,
  isolation: Isolation,
  packages: PlaywrightPackages,
  teamNodeOptions: string | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  const preloads: string[] = [];
  if (options.codeCache !== undefined && packages === servicePlaywright()) {
    preloads.push(`${layout.runtime}/code-cache.js`);
    env.TESTRUN_CODE_CACHE_DIR = isolation === 'none' ? options.codeCache : INSIDE_CODE_CACHE;
  }
  if (options.egressProxy !== undefined) {
    preloads.push(`${layout.runtime}/egress.js`);
    env.TESTRUN_EGRESS_PROXY = options.egressProxy;
  }
  if (preloads.length === 0) return env;
  const hooks = preloads.map((file) => `--require ${JSON.stringify(file)}`);
  return { ...env, NODE_OPTIONS: [...hooks, ...(teamNodeOptions ? [teamNodeOptions] : [])].join(' ') };
}

/** Runs the Playwright CLI (`args` after it) in the sandbox, or without one when the operator opted out. */
export async function runPlaywrightCli(
  kind: 'list' | 'run',
  options: {
    isolation?: Isolation;
    scratchDir: string;
    limits?: Partial<SandboxLimits>;
    signal?: AbortSignal;
    controlDir?: string;
    codeCache?: string;
    /** The proxy the team's Node code reaches the network through (`127.0.0.1:port`), as its browser does. */
    egressProxy?: string;
    /** The @playwright/test the bundle runs on (versions.ts); the service's by default. */
    packages?: PlaywrightPackages;
  },
  args: readonly string[],
  env: Record<string, string>,
  network: SandboxSpec['network'],
): Promise<SandboxResult> {
  const isolation = options.isolation ?? 'sandbox';
  const layout = layoutOf(isolation, options.scratchDir);
  const packages = options.packages ?? servicePlaywright();
  const cli = `${layout.nodeModules}/playwright/cli.js`;
  const control: Record<string, string> =
    options.controlDir === undefined
      ? {}
      : { TESTRUN_CONTROL_DIR: isolation === 'none' ? options.controlDir : INSIDE_CONTROL };
  const preload = preloadEnv(options, layout, isolation, packages, env.NODE_OPTIONS);
  const spec = {
    command: process.execPath,
    args: [cli, ...args],
    env: { ...env, ...control, ...preload },
    scratchDir: options.scratchDir,
    limits: { ...DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS, ...options.limits },
    signal: options.signal,
  };
  if (isolation === 'none') return runUnsandboxed(spec);
  return runSandboxed({ ...spec, ...(await playwrightSandbox(kind, options, packages)), network });
}
