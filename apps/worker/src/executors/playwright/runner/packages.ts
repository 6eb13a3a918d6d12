import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { scratchDirPrefix } from '../../../support/scratch-dir';
import { playwrightFfmpegPath } from '../../../run/video';
import { shareCopy, shareFolder } from '../../../sandbox';
import { servicePlaywright, type PlaywrightPackages } from './versions';

/*
 * What a Playwright process is given of the service: the @playwright/test the bundle runs on (or the
 * stand-in for it), its playwright and playwright-core (versions.ts), the compiled inside/ folder and
 * Playwright's ffmpeg. A sandbox
 * gets copies in the worker's share (sandbox/share.ts), so that its /proc/self/mountinfo names
 * nothing of where the worker, its repository or its caches live; without a sandbox
 * (PLAYWRIGHT_SANDBOX=off), the host's own folders.
 */

/** The compiled inside/ folder (also when the worker runs from its sources under jest). */
export const INSIDE_BUILD = path.resolve(__dirname, '../../../../dist/executors/playwright/inside');

/** The folders a Playwright process is given, on the host: ffmpeg's is null when it is not installed or not needed. */
export interface PlaywrightSources {
  /** `@playwright/test`: the real package when listing, the stand-in for a run. */
  test: string;
  playwright: string;
  core: string;
  /** The compiled reporter, fixtures and code-cache hook (inside/). */
  runtime: string;
  ffmpeg: string | null;
  /** The folder the version looks for ffmpeg in (`ffmpeg-<revision>` of its browsers.json), where ffmpeg's is mounted. */
  ffmpegAs: string | null;
}

/** The folder name of the ffmpeg the playwright-core at `core` runs (`ffmpeg-<revision>`), or null. */
function ffmpegFolderOf(core: string): string | null {
  try {
    const { browsers } = JSON.parse(readFileSync(path.join(core, 'browsers.json'), 'utf8')) as {
      browsers: { name: string; revision: string }[];
    };
    const revision = browsers.find((browser) => browser.name === 'ffmpeg')?.revision;
    return revision === undefined ? null : `ffmpeg-${revision}`;
  } catch {
    return null;
  }
}

/** The compiled fixture and the modules of inside/ it imports. */
const FIXTURE_FILES = ['fixtures.js', 'protocol.js'];

/**
 * Writes into `dir` a package standing in for `@playwright/test` in runs: everything of
 * `playwright/test`, with `test` extended by the fixture that sends the headers to the target only
 * (inside/fixtures.ts), found under `runtimeDir` (the sandbox's mount of inside/, whence it resolves
 * `playwright/test` from the sandbox's /node_modules). Without a sandbox (`runtimeDir` null) the
 * fixture (with the modules it imports) is copied into the package, which is copied into the run's node_modules: it resolves
 * `playwright/test` there, the bundle's version, not the worker's own.
 */
function writeShim(dir: string, runtimeDir: string | null, packages: PlaywrightPackages): void {
  if (runtimeDir === null)
    for (const file of FIXTURE_FILES) writeFileSync(path.join(dir, file), readFileSync(path.join(INSIDE_BUILD, file)));
  const fixtures = runtimeDir === null ? './fixtures.js' : `${runtimeDir}/fixtures.js`;
  const real = packages.test;
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
    // Node cannot list a CommonJS module's re-exports (fixtures.js's `export *` of playwright/test):
    // the ES module entry takes them from playwright/test itself, and `test` from the fixture.
    `export * from 'playwright/test';\nexport { test, test as default } from ${JSON.stringify(fixtures)};\n`,
  );
  for (const file of ['index.d.ts', 'reporter.js', 'reporter.mjs', 'reporter.d.ts', 'cli.js'])
    writeFileSync(path.join(dir, file), readFileSync(path.join(real, file)));
}

function checkBuilt(): void {
  if (!existsSync(path.join(INSIDE_BUILD, 'reporter.js')))
    throw new Error(`${INSIDE_BUILD}/reporter.js is missing (build the worker)`);
}

/** ffmpeg's folder, for a run when it is installed (video). */
function ffmpegDir(kind: 'list' | 'run'): string | null {
  const ffmpeg = playwrightFfmpegPath();
  return kind === 'run' && ffmpeg !== null && existsSync(ffmpeg) ? path.dirname(ffmpeg) : null;
}

/** The stand-ins made without a sandbox, by version. */
const hostShims = new Map<string, string>();

/** Without a sandbox, for a run: the host's folders, and the stand-in in a folder of the process's own. */
export function hostSources(packages: PlaywrightPackages = servicePlaywright()): PlaywrightSources {
  checkBuilt();
  let shim = hostShims.get(packages.version);
  if (shim === undefined) {
    // Named like a scratch directory: a worker killed before its exit handler runs leaves it to the
    // next one's sweep. Made once per process and version, gone with the process.
    const dir = mkdtempSync(scratchDirPrefix());
    chmodSync(dir, 0o755);
    writeShim(dir, null, packages);
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    hostShims.set(packages.version, dir);
    shim = dir;
  }
  const { playwright, core } = packages;
  const ffmpeg = ffmpegDir('run');
  return { test: shim, playwright, core, runtime: INSIDE_BUILD, ffmpeg, ffmpegAs: ffmpegFolderOf(core) };
}

/**
 * For a sandbox whose mount of inside/ is `runtimeDir`: copies of the folders of `packages` (the
 * service's by default) and of inside/ in the worker's share, each made when a sandbox first needs it
 * (about 20 MB a version, playwright-core's most).
 */
export async function sharedSources(
  kind: 'list' | 'run',
  runtimeDir: string,
  packages: PlaywrightPackages = servicePlaywright(),
): Promise<PlaywrightSources> {
  checkBuilt();
  const { test, playwright, core, version } = packages;
  const ffmpeg = ffmpegDir(kind);
  const [testDir, playwrightDir, coreDir, runtime, ffmpegCopy] = await Promise.all([
    kind === 'run'
      ? shareFolder(`playwright-test-shim@${version}`, 0o755, (dir) => writeShim(dir, runtimeDir, packages))
      : shareCopy(`playwright-test@${version}`, test),
    shareCopy(`playwright@${version}`, playwright),
    shareCopy(`playwright-core@${version}`, core),
    shareCopy('inside', INSIDE_BUILD),
    ffmpeg === null ? null : shareCopy(path.basename(ffmpeg), ffmpeg),
  ]);
  return {
    test: testDir,
    playwright: playwrightDir,
    core: coreDir,
    runtime,
    ffmpeg: ffmpegCopy,
    ffmpegAs: ffmpegFolderOf(core),
  };
}
