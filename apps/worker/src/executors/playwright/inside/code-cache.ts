/*
 * Loaded INSIDE the sandbox before anything else (NODE_OPTIONS=--require, so in the Playwright
 * runner and in every Playwright worker it forks): compiles the service's large Playwright modules
 * with V8's code cache, made by the worker from the same files (code-cache.ts beside this folder).
 * Node 20 has no compile cache of its own, and every process of a sandbox would otherwise compile
 * about 10 MB of Playwright's bundles anew: a quarter of a second of CPU each, before a test runs.
 *
 * A file uses the cache only when one was made from exactly its bytes (the cache's name is their
 * SHA-256), in a folder the sandbox reads and cannot write. A file that holds `import(` anywhere is
 * never cached: Node 20's V8 loses a script's dynamic import callback when the script comes from a
 * code cache ("A dynamic import callback was not specified"), and Playwright loads an ES module
 * config or spec through import() (an eval in common/index.js, esmLoader.js). V8 refuses a cache made by another
 * version or with other flags, and the file is then compiled as usual. Every other file (the team's
 * code included) goes through Node's own loader untouched.
 *
 * The worker runs this module outside the sandbox too, with TESTRUN_CODE_CACHE_WRITE=1, to make the
 * cache: each large file it compiled is written at exit, whole or not at all.
 * It imports nothing but Node: the worker's modules are not in the sandbox.
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/** Files at least this long (in characters) are worth a cache: Playwright's bundles, not the small modules. */
export const MIN_CACHED_CHARS = 100_000;

/** Whether a file may be compiled from a cache: large, not a script with a #! line, and no import() in it. */
function cacheable(content: string): boolean {
  return content.length >= MIN_CACHED_CHARS && !content.startsWith('#!') && !content.includes('import(');
}

/** What this process did: for the tests, and for a look from inside. */
export const stats = { accepted: 0, rejected: 0, written: 0 };

/** What of Node's CommonJS module object the hook uses (Node's types call it NodeModule). */
interface LoadedModule {
  exports: unknown;
  require: (id: string) => unknown;
}
type Compile = (this: LoadedModule, content: string, filename: string) => unknown;
interface ModuleStatics {
  prototype: { _compile: Compile };
  wrap: (content: string) => string;
  _resolveFilename: (request: string, parent: LoadedModule, isMain: boolean, options?: unknown) => string;
  _resolveLookupPaths: (request: string, parent: LoadedModule) => string[] | null;
  _extensions: unknown;
  _cache: unknown;
}

const statics = Module as unknown as ModuleStatics;

/** The `require` a module's code is given, as Node makes it (lib/internal/modules/helpers.js). */
function requireFor(mod: LoadedModule): unknown {
  const require = Object.assign((id: string) => mod.require(id), {
    resolve: Object.assign(
      (request: string, options?: unknown) => statics._resolveFilename(request, mod, false, options),
      { paths: (request: string) => statics._resolveLookupPaths(request, mod) },
    ),
    main: mainModule,
    extensions: statics._extensions,
    cache: statics._cache,
  });
  return require;
}

/** The process's main module, as every module's `require.main` has it. */
const mainModule: unknown = require.main;

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Writes `data` to `file` whole: a reader sees all of it or no file. */
function writeWhole(file: string, data: Buffer): void {
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, data, { mode: 0o644 });
  renameSync(partial, file);
}

/** Installs the hook: consults (or, writing, fills) the cache in `dir` for every large CommonJS file. */
export function install(dir: string, write: boolean): void {
  const original = statics.prototype._compile;
  statics.prototype._compile = function compile(this: LoadedModule, content: string, filename: string) {
    if (!cacheable(content)) return original.call(this, content, filename);
    const file = path.join(dir, `${createHash('sha256').update(content).digest('hex')}.v8`);
    const cachedData = readCache(file);
    if (cachedData === undefined && !write) return original.call(this, content, filename);
    const script = new vm.Script(statics.wrap(content), {
      filename,
      cachedData,
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    if (cachedData !== undefined) {
      if (script.cachedDataRejected) stats.rejected += 1;
      else stats.accepted += 1;
    }
    // Made after the module ran: it holds the functions its loading compiled too.
    if (write && (cachedData === undefined || script.cachedDataRejected))
      process.once('exit', () => {
        try {
          writeWhole(file, script.createCachedData());
          stats.written += 1;
        } catch {
          // No cache for this file: it compiles as usual.
        }
      });
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, requireFor(this), this, filename, path.dirname(filename));
  };
}

const cacheDir = process.env.TESTRUN_CODE_CACHE_DIR;
if (cacheDir) install(cacheDir, process.env.TESTRUN_CODE_CACHE_WRITE === '1');
