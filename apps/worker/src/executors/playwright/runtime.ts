import { chmodSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { cp, mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { scratchDirPrefix } from '../../housekeeping/scratch-dir';
import { playwrightFfmpegPath } from '../../run/video';
import {
  DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS,
  runSandboxed,
  runUnsandboxed,
  type SandboxLimits,
  type SandboxResult,
  type SandboxSpec,
} from '../../sandbox';
import { codeCacheEnv } from './code-cache';
import { TRANSFORM_DIR } from './transform-cache';

/** Where things are inside the sandbox. */
export const INSIDE = {
  work: '/work',
  nodeModules: '/node_modules',
  bundle: '/work/bundle',
  state: '/work/.testrun',
  output: '/work/output',
  /** The compiled reporter and fixtures (inside/), read only. */
  runtime: '/opt/testrun/playwright',
  browsers: '/opt/ms-playwright',
  /** Debian's Chromium binary itself: /usr/bin/chromium is a shell script that reads /etc/chromium.d, absent in the sandbox. */
  chromium: '/usr/lib/chromium/chromium',
} as const;

/** Where the sandbox sees the worker's control directory (interrupt.ts), read only. */
const INSIDE_CONTROL = '/opt/testrun/control';
/** Where the sandbox sees the worker's code cache of Playwright's modules (code-cache.ts), read only. */
const INSIDE_CODE_CACHE = '/opt/testrun/code-cache';

/** The compiled inside/ folder (also when the worker runs from its sources under jest). */
const INSIDE_BUILD = path.resolve(__dirname, '../../../dist/executors/playwright/inside');

interface Packages {
  test: string;
  playwright: string;
  core: string;
  version: string;
}

let packages: Packages | undefined;

/** The service's @playwright/test, playwright and playwright-core: their real directories (pnpm links them). */
export function playwrightPackages(): Packages {
  if (packages) return packages;
  const dirOf = (packageJson: string) => realpathSync(path.dirname(packageJson));
  const test = dirOf(require.resolve('@playwright/test/package.json'));
  const playwright = dirOf(require.resolve('playwright/package.json', { paths: [test] }));
  const core = dirOf(require.resolve('playwright-core/package.json', { paths: [playwright] }));
  const { version } = JSON.parse(readFileSync(path.join(test, 'package.json'), 'utf8')) as { version: string };
  packages = { test, playwright, core, version };
  return packages;
}

const shimDirs = new Map<string, string>();

/**
 * A package standing in for `@playwright/test` in runs: everything of `playwright/test`, with
 * `test` extended by the fixture that sends the headers to the target only (inside/fixtures.ts),
 * found under `runtimeDir` (the sandbox's mount of inside/, or the build's own without one).
 */
function shimPackage(runtimeDir: string = INSIDE.runtime): string {
  const made = shimDirs.get(runtimeDir);
  if (made) return made;
  // Named like a scratch directory: a worker killed before its exit handler runs leaves it to the
  // next one's sweep. Read by the sandbox's own unprivileged user: mkdtemp makes it 0700.
  const dir = mkdtempSync(scratchDirPrefix());
  chmodSync(dir, 0o755);
  const fixtures = `${runtimeDir}/fixtures.js`;
  const real = playwrightPackages().test;
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      ...(JSON.parse(readFileSync(path.join(real, 'package.json'), 'utf8')) as object),
      bin: undefined,
    }),
  );
  // `import test from '@playwright/test'` gets `test`, as from the real package.
  writeFileSync(
    path.join(dir, 'index.js'),
    `const m = require(${JSON.stringify(fixtures)});\nmodule.exports = { ...m, default: m.test, __esModule: true };\n`,
  );
  writeFileSync(
    path.join(dir, 'index.mjs'),
    `export * from ${JSON.stringify(fixtures)};\nexport { test as default } from ${JSON.stringify(fixtures)};\n`,
  );
  for (const file of ['index.d.ts', 'reporter.js', 'reporter.mjs', 'reporter.d.ts', 'cli.js'])
    writeFileSync(path.join(dir, file), readFileSync(path.join(real, file)));
  shimDirs.set(runtimeDir, dir);
  // Made once per process, gone with it.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The read-only mounts of a sandbox running Playwright: the service's packages and our reporter. */
function playwrightMounts(kind: 'list' | 'run', runtimeDir: string = INSIDE.runtime): { from: string; to: string }[] {
  if (!existsSync(path.join(INSIDE_BUILD, 'reporter.js')))
    throw new Error(`${INSIDE_BUILD}/reporter.js is missing (build the worker)`);
  const { test, playwright, core } = playwrightPackages();
  const mounts = [
    { from: kind === 'run' ? shimPackage(runtimeDir) : test, to: `${INSIDE.nodeModules}/@playwright/test` },
    { from: playwright, to: `${INSIDE.nodeModules}/playwright` },
    { from: core, to: `${INSIDE.nodeModules}/playwright-core` },
    { from: INSIDE_BUILD, to: INSIDE.runtime },
  ];
  const ffmpeg = playwrightFfmpegPath();
  if (kind === 'run' && ffmpeg !== null && existsSync(ffmpeg))
    mounts.push({ from: path.dirname(ffmpeg), to: `${INSIDE.browsers}/${path.basename(path.dirname(ffmpeg))}` });
  return mounts;
}

/** The sandbox's environment: nothing of the worker's; the test's variables on top. */
export function playwrightEnv(
  extra: Readonly<Record<string, string>> = {},
  layout: Layout = INSIDE,
): Record<string, string> {
  return {
    ...extra,
    PATH: '/usr/bin:/bin',
    HOME: `${layout.work}/home`,
    TMPDIR: `${layout.work}/tmp`,
    // Where our reporter and fixture find the run's files (inside/): the sandbox's paths by default.
    TESTRUN_STATE_DIR: layout.state,
    TESTRUN_BUNDLE_DIR: layout.bundle,
    PLAYWRIGHT_BROWSERS_PATH: layout.browsers,
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    FORCE_COLOR: '0',
    NO_COLOR: '1',
    CI: '1',
    // What Playwright compiled, seeded from earlier sandboxes of the bundle (transform-cache.ts).
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
): Promise<void> {
  await cp(bundleDir, path.join(scratchDir, 'bundle'), { recursive: true, verbatimSymlinks: true });
  for (const dir of ['.testrun', 'home', 'tmp', 'output']) await mkdir(path.join(scratchDir, dir), { recursive: true });
  if (isolation === 'sandbox') return;
  const { nodeModules } = layoutOf(isolation, scratchDir);
  for (const { from, to } of playwrightMounts('run', INSIDE_BUILD)) {
    if (!to.startsWith(`${INSIDE.nodeModules}/`)) continue;
    const link = path.join(nodeModules, to.slice(INSIDE.nodeModules.length + 1));
    await mkdir(path.dirname(link), { recursive: true });
    await symlink(from, link);
  }
}

/** The limits (sandbox/limits.ts, each overridable) and fixed parts of a Playwright sandbox spec. */
function playwrightSandbox(
  kind: 'list' | 'run',
  scratchDir: string,
  limits: Partial<SandboxLimits> | undefined,
  binds: { controlDir?: string; codeCache?: string },
): Pick<SandboxSpec, 'command' | 'readOnlyBinds' | 'readOnlyMounts' | 'scratchDir' | 'limits'> {
  const control = binds.controlDir === undefined ? [] : [{ from: binds.controlDir, to: INSIDE_CONTROL }];
  const codeCache = binds.codeCache === undefined ? [] : [{ from: binds.codeCache, to: INSIDE_CODE_CACHE }];
  return {
    command: process.execPath,
    readOnlyBinds: [],
    readOnlyMounts: [...playwrightMounts(kind), ...control, ...codeCache],
    scratchDir,
    limits: { ...DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS, ...limits },
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
  };
}

/** Runs the Playwright CLI (`args` after it) in the sandbox, or without one when the operator opted out. */
export function runPlaywrightCli(
  kind: 'list' | 'run',
  options: {
    isolation?: Isolation;
    scratchDir: string;
    limits?: Partial<SandboxLimits>;
    signal?: AbortSignal;
    controlDir?: string;
    codeCache?: string;
  },
  args: readonly string[],
  env: Record<string, string>,
  network: SandboxSpec['network'],
): Promise<SandboxResult> {
  const isolation = options.isolation ?? 'sandbox';
  const layout = layoutOf(isolation, options.scratchDir);
  const cli = `${layout.nodeModules}/playwright/cli.js`;
  const sandbox = playwrightSandbox(kind, options.scratchDir, options.limits, options);
  const control: Record<string, string> =
    options.controlDir === undefined
      ? {}
      : { TESTRUN_CONTROL_DIR: isolation === 'none' ? options.controlDir : INSIDE_CONTROL };
  const codeCache =
    options.codeCache === undefined
      ? {}
      : codeCacheEnv(isolation === 'none' ? options.codeCache : INSIDE_CODE_CACHE, layout.runtime, env.NODE_OPTIONS);
  const spec = { ...sandbox, args: [cli, ...args], env: { ...env, ...control, ...codeCache } };
  if (isolation === 'none') return runUnsandboxed({ ...spec, signal: options.signal });
  return runSandboxed({ ...spec, network, signal: options.signal });
}
