/*
 * Loaded INSIDE the sandbox before anything else (NODE_OPTIONS=--require, so in the Playwright
 * runner and in every Playwright worker it forks): compiles the service's large Playwright modules
 * with V8's code cache, made by the worker from the same files (code-cache.ts beside this folder).
 * Node 20 has no compile cache of its own, and every process of a sandbox would otherwise compile
 * about 10 MB of Playwright's bundles anew: a quarter of a second of CPU each, before a test runs.
 *
 * A file uses the cache only when one was made from exactly its bytes (the cache's name is their
 * SHA-256), in a folder the sandbox reads and cannot write. Node 20's V8 loses a script's dynamic
 * import callback when the script comes from a code cache ("A dynamic import callback was not
 * specified"), and Playwright loads an ES module config or spec through import(). So a file that
 * holds `import(` is cached only with the places of its dynamic imports, found by parsing it where
 * the cache is made (caches/import-sites.ts): each of those `import` keywords is renamed to
 * {@link IMPORT_SHIM}, a function of the module's that imports as Node would for it (compiled by
 * Node's own loader, with the module's file name, so specifiers resolve from the same place). A file
 * that may compile code calling import() at run time (an eval in common/index.js, esmLoader.js) is
 * never cached. V8 refuses a cache made by another version or with other flags, and the file is then
 * compiled as usual. Every other file (the team's code included) goes through Node's own loader
 * untouched.
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

/**
 * What a cached file's dynamic imports call instead of `import(`: as long as the keyword, so every
 * line and column of the file stays where it was.
 */
export const IMPORT_SHIM = '$TRimp';

/** Whether a file may be compiled from a cache: large, not a script with a #! line. */
function cacheable(content: string): boolean {
  return content.length >= MIN_CACHED_CHARS && !content.startsWith('#!');
}

/** What may be a dynamic import: `import` before `(`, or before a comment (which may hide one). */
const MAY_IMPORT = /\bimport\s*(\(|\/[*/])/;

/** Finds the places of a file's dynamic imports (null: not cacheable); the cache's maker sets it. */
type ImportSites = (content: string) => number[] | null;
let findImportSites: ImportSites | undefined;

/** Given by the process that makes the cache (caches/code-cache.ts), before it loads Playwright. */
export function useImportSites(find: ImportSites): void {
  findImportSites = find;
}

/**
 * The places as `content` can take them: every one an `import` keyword followed by `(`, in order,
 * and the shim's name nowhere in the file; null otherwise (the file is then compiled as usual).
 */
function checkedSites(content: string, sites: unknown): number[] | null {
  if (!Array.isArray(sites) || content.includes(IMPORT_SHIM)) return null;
  let last = -1;
  for (const site of sites as unknown[]) {
    if (typeof site !== 'number' || !Number.isInteger(site) || site <= last) return null;
    if (!content.startsWith('import', site) || !/^\s*\(/.test(content.slice(site + 6, site + 64))) return null;
    last = site;
  }
  return sites as number[];
}

/** The places of `content`'s dynamic imports, as the cache in `file` was made with; null: none usable. */
function readSites(file: string, content: string): number[] | null {
  try {
    return checkedSites(content, JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return null;
  }
}

/** `content` with the `import` keyword at each of `sites` renamed to the shim. */
function renameImports(content: string, sites: number[]): string {
  let renamed = '';
  let from = 0;
  for (const site of sites) {
    renamed += content.slice(from, site) + IMPORT_SHIM;
    from = site + 'import'.length;
  }
  return renamed + content.slice(from);
}

/** Node's module wrapper with the shim as one more parameter. */
function wrapWithShim(content: string): string {
  return `(function (exports, require, module, __filename, __dirname, ${IMPORT_SHIM}) { ${content}\n});`;
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
  _resolveFilename: (request: string, parent: LoadedModule, isMain: boolean, options?: unknown) => string;
  _resolveLookupPaths: (request: string, parent: LoadedModule) => string[] | null;
  _nodeModulePaths: (from: string) => string[];
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

/**
 * The module's `import()` for its renamed dynamic imports: compiled by Node's own CommonJS loader
 * (`compile`, the original), with the module's file name, so it resolves and loads as the module's
 * own import() would (Playwright's loader hooks included); none when the file has no such import.
 */
function shimFor(compile: Compile, filename: string, sites: number[]): unknown {
  if (sites.length === 0) return undefined;
  const shim = new (Module as unknown as new (id: string) => LoadedModule & { filename: string; paths: string[] })(
    filename,
  );
  shim.filename = filename;
  shim.paths = statics._nodeModulePaths(path.dirname(filename));
  compile.call(shim, 'module.exports = (specifier, options) => import(specifier, options);', filename);
  return shim.exports;
}

/** The SHA-256 of `text`, in hex: the name of what the cache keeps for it. */
function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The places of a file's dynamic imports its cache goes with, kept in `importsFile` ([] when the
 * file can hold none: no such file); null when the file is compiled as usual.
 */
function sitesFor(content: string, importsFile: string | null, write: boolean): number[] | null {
  if (importsFile === null) return [];
  if (!write) return readSites(importsFile, content);
  return findImportSites ? checkedSites(content, findImportSites(content)) : null;
}

/** Installs the hook: consults (or, writing, fills) the cache in `dir` for every large CommonJS file. */
export function install(dir: string, write: boolean): void {
  const original = statics.prototype._compile;
  statics.prototype._compile = function compile(this: LoadedModule, content: string, filename: string) {
    if (!cacheable(content)) return original.call(this, content, filename);
    const importsFile = MAY_IMPORT.test(content) ? path.join(dir, `${sha256(content)}.imports`) : null;
    const sites = sitesFor(content, importsFile, write);
    if (sites === null) return original.call(this, content, filename);
    // Named after the very source V8 compiles (its imports renamed), which V8 itself does not check
    // (only its length): places that do not match the cache's find no cache.
    const source = renameImports(content, sites);
    const file = path.join(dir, `${sha256(source)}.v8`);
    const cachedData = readCache(file);
    if (cachedData === undefined && !write) return original.call(this, content, filename);
    const script = new vm.Script(wrapWithShim(source), { filename, cachedData });
    if (cachedData !== undefined) {
      if (script.cachedDataRejected) stats.rejected += 1;
      else stats.accepted += 1;
    }
    // Made after the module ran: it holds the functions its loading compiled too. The places of its
    // imports first: a cache is used only with them.
    if (write && (cachedData === undefined || script.cachedDataRejected))
      process.once('exit', () => {
        try {
          if (importsFile !== null) writeWhole(importsFile, Buffer.from(JSON.stringify(sites)));
          writeWhole(file, script.createCachedData());
          stats.written += 1;
        } catch {
          // No cache for this file: it compiles as usual.
        }
      });
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    const shim = shimFor(original, filename, sites);
    return wrapper.call(this.exports, this.exports, requireFor(this), this, filename, path.dirname(filename), shim);
  };
}

const cacheDir = process.env.TESTRUN_CODE_CACHE_DIR;
if (cacheDir) install(cacheDir, process.env.TESTRUN_CODE_CACHE_WRITE === '1');
