import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/*
 * V8's code cache of the service's Playwright modules, for the processes of every sandbox
 * (inside/code-cache.ts, docs/PLAYWRIGHT.md "Batches"). The worker makes it once per process, when
 * its first sandbox starts, in its share (sandbox/share.ts; its scratch directory without the
 * sandbox): a Node process outside any sandbox, running only the service's code, loads the modules
 * the runner and its workers load and writes what V8 compiled.
 * Sandboxes read the folder and cannot write it, so no team's code can change what another's runs.
 */

/** The hook, as built JavaScript (also when the worker runs from its sources under jest). */
export const CODE_CACHE_HOOK = path.resolve(__dirname, '../../../../dist/executors/playwright/inside/code-cache.js');
/** What finds the places of a module's dynamic imports (import-sites.ts), for the producer, as built JavaScript. */
export const IMPORT_SITES = path.resolve(__dirname, '../../../../dist/executors/playwright/caches/import-sites.js');

/** The Playwright modules a runner and its workers load first, relative to the `playwright` package. */
const ENTRIES = [
  'lib/program.js',
  'lib/index.js',
  'lib/runner/index.js',
  'lib/common/index.js',
  'lib/matchers/expect.js',
  'lib/transform/babelBundle.js',
];

/** Cuts a producer that hangs: no sandbox waits for it, but it must not stay. */
const PRODUCE_TIMEOUT_MS = 60_000;

/**
 * The worker's code cache: a folder made at start, filled when the first sandbox asks for it (a
 * worker that never runs a team's Playwright code never pays for it). Sandboxes started while it is
 * being made compile what is not there yet, as without a cache.
 */
export class CodeCache {
  private making: Promise<boolean> | undefined;
  private child: ChildProcess | undefined;
  private stopped = false;

  private constructor(
    readonly dir: string,
    private readonly playwrightDir: string,
    private readonly onFailed: (reason: string) => void,
  ) {}

  /**
   * Makes the (empty) folder `dir` for the cache of the `playwright` package at `playwrightDir`;
   * `onFailed` hears why, if the cache cannot be made.
   */
  static async create(
    dir: string,
    playwrightDir: string,
    onFailed: (reason: string) => void = () => undefined,
  ): Promise<CodeCache> {
    await mkdir(dir, { recursive: true, mode: 0o755 });
    return new CodeCache(dir, playwrightDir, onFailed);
  }

  /** The folder, for a sandbox to read; the first call starts filling it. */
  use(): string {
    void this.ready();
    return this.dir;
  }

  /**
   * Resolves when the cache is made: true, or false when it could not be. A folder made whole before
   * (the share is the process's, so every worker of a process that runs several, as a test runner
   * does, finds it) is not made again: its mark, beside it where no sandbox sees it, is written last.
   */
  ready(): Promise<boolean> {
    const mark = `${this.dir}.made`;
    this.making ??= existsSync(mark)
      ? Promise.resolve(true)
      : this.produce().then(async (failure) => {
          if (failure !== null) {
            if (!this.stopped) this.onFailed(failure);
            return false;
          }
          // Unmarked, the next worker of the process makes it again: nothing worse.
          await writeFile(mark, '').catch(() => undefined);
          return true;
        });
    return this.making;
  }

  /** Stops a cache still being made (the worker is stopping). */
  stop(): void {
    this.stopped = true;
    this.child?.kill('SIGKILL');
  }

  /** Makes the cache: null when made, else why not. */
  private produce(): Promise<string | null> {
    if (!existsSync(CODE_CACHE_HOOK)) return Promise.resolve(`${CODE_CACHE_HOOK} is missing (build the worker)`);
    const files = ENTRIES.map((entry) => path.join(this.playwrightDir, entry)).filter((file) => existsSync(file));
    const script = [
      `require(${JSON.stringify(CODE_CACHE_HOOK)}).useImportSites(require(${JSON.stringify(IMPORT_SITES)}).importSites);`,
      `for (const file of ${JSON.stringify(files)}) { try { require(file); } catch {} }`,
    ].join('\n');
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['--require', CODE_CACHE_HOOK, '-e', script], {
        cwd: this.dir,
        // Nothing of the worker's environment: the hook's two settings only.
        env: { TESTRUN_CODE_CACHE_DIR: this.dir, TESTRUN_CODE_CACHE_WRITE: '1' },
        stdio: 'ignore',
        timeout: PRODUCE_TIMEOUT_MS,
      });
      this.child = child;
      child.on('error', (error) => resolve(error.message));
      child.on('exit', (code, signal) =>
        resolve(code === 0 ? null : `its process ended with ${signal ?? `exit code ${code}`}`),
      );
    });
  }
}
