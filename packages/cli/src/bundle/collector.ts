import { readFileSync, realpathSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { PROVIDED_PACKAGES } from '@testrun/contracts';
import { scanImports } from './scan-imports';
import { findPackageDir, readPackageJson, resolveImport, type Resolution } from './resolve';
import { loadTsconfig, nearestFile, resolveMapped, type LoadedTsconfig } from './tsconfig';
import { globToRegExp, posixRelative, walkFiles } from './walk';

// The files of a bundle, gathered from the files Playwright loads: each local file's imports are
// followed (tsconfig `paths` first, as Playwright resolves them), npm packages are packed whole
// with their dependencies, the tsconfig files that resolve a file's imports and the package.json
// that says how it loads (`type`) are packed beside it,
// and what the `exclude` globs match is neither packed nor followed. A refusal names the chain of
// imports that led to the file and how to leave it out.

const SCANNED = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;

/** Where a local file was imported from: the importing file (bundle path) and line. */
interface Origin {
  from: string;
  line: number;
}

export class Collector {
  readonly files = new Map<string, string>();
  readonly refusals: string[] = [];
  private readonly packages = new Map<string, string>();
  private readonly pending: string[] = [];
  private readonly origins = new Map<string, Origin | undefined>();
  private readonly tsconfigs = new Map<string, LoadedTsconfig | null>();
  private readonly excludes: RegExp[];

  /**
   * @param root the project file's directory (real path): the bundle's root
   * @param exclude globs of bundle paths to leave out
   * @param singleTsconfig the config's `tsconfig` option (absolute), which then applies to every file
   */
  constructor(
    readonly root: string,
    exclude: readonly string[] = [],
    private readonly singleTsconfig: string | null = null,
  ) {
    this.excludes = exclude.map(globToRegExp);
  }

  /** Whether a bundle path is left out by `exclude`. */
  excluded(rel: string): boolean {
    return this.excludes.some((glob) => glob.test(rel));
  }

  /** A local file (real path): packed at its path under the root, its tsconfig beside it, and its imports followed. */
  addLocal(file: string, origin?: Origin): void {
    const rel = posixRelative(this.root, file);
    if (this.files.has(rel) || this.excluded(rel)) return;
    this.files.set(rel, file);
    this.origins.set(rel, origin);
    if (!SCANNED.test(file)) return;
    this.pending.push(file);
    const tsconfig = this.tsconfigOf(file, rel);
    for (const config of tsconfig?.files ?? []) this.addPlain(config);
    // Its package.json says how Node and Playwright load it (`type`, `imports`).
    const manifest = nearestFile(path.dirname(file), this.root, ['package.json']);
    if (manifest) this.addPlain(manifest);
  }

  /** A file packed as it is (a tsconfig), when it is under the root and not excluded. */
  private addPlain(file: string): void {
    const rel = posixRelative(this.root, file);
    if (rel.startsWith('../') || path.isAbsolute(rel) || this.excluded(rel)) return;
    this.files.set(rel, file);
  }

  /** `a.spec.ts:3 → helpers/db.ts:1`: the imports that led to `rel:line`. */
  chain(rel: string, line: number): string {
    const parts = [`${rel}:${line}`];
    for (let origin = this.origins.get(rel); origin; origin = this.origins.get(origin.from))
      parts.unshift(`${origin.from}:${origin.line}`);
    return parts.join(' → ');
  }

  /** The refusal for `rel:line`, with how to leave out the file its chain starts from. */
  private refuse(rel: string, line: number, what: string): void {
    const chain = this.chain(rel, line);
    const first = chain.slice(0, chain.indexOf(':'));
    this.refusals.push(`${chain}: ${what} (to leave ${first} out of the bundle, add it to playwright.exclude)`);
  }

  run(): void {
    for (let file = this.pending.shift(); file !== undefined; file = this.pending.shift()) this.follow(file);
  }

  private tsconfigOf(file: string, rel: string): LoadedTsconfig | null {
    const config = this.singleTsconfig ?? nearestFile(path.dirname(file), this.root);
    if (config === null) return null;
    if (!this.tsconfigs.has(config))
      try {
        this.tsconfigs.set(config, loadTsconfig(config));
      } catch (e) {
        this.tsconfigs.set(config, null);
        this.refusals.push(`${rel}: ${(e as Error).message}`);
      }
    return this.tsconfigs.get(config) ?? null;
  }

  private resolve(specifier: string, file: string): Resolution {
    const bare = !specifier.startsWith('.') && !path.isAbsolute(specifier);
    if (bare && !specifier.startsWith('node:') && !builtinModules.includes(specifier)) {
      const tsconfig = this.tsconfigOf(file, posixRelative(this.root, file));
      const mapped = tsconfig ? resolveMapped(tsconfig, specifier, file) : null;
      if (mapped) return { kind: 'file', file: mapped };
    }
    return resolveImport(specifier, file);
  }

  private follow(file: string): void {
    const rel = posixRelative(this.root, file);
    for (const { specifier, line } of scanImports(readFileSync(file, 'utf8'))) {
      const resolved = this.resolve(specifier, file);
      if (resolved.kind === 'provided') continue;
      if (resolved.kind === 'missing') {
        this.refuse(rel, line, `cannot resolve import "${specifier}" (${resolved.why})`);
      } else if (resolved.kind === 'package') {
        this.addPackage(resolved.name, resolved.dir, { from: rel, line });
      } else {
        const real = realpathSync(resolved.file);
        const inside = posixRelative(this.root, real);
        if (inside.startsWith('../') || path.isAbsolute(inside))
          this.refuse(
            rel,
            line,
            `imports "${specifier}" (${real}), which is outside the project file's directory ${this.root}; only files under it are bundled`,
          );
        else this.addLocal(real, { from: rel, line });
      }
    }
  }

  /** A package packed whole at `node_modules/<name>`, then its dependencies; a native one is refused. */
  private addPackage(name: string, dir: string, via: Origin, through: string[] = []): void {
    const at = `node_modules/${name}`;
    if (this.packages.has(name) || this.excluded(at) || this.excluded(`${at}/package.json`)) return;
    this.packages.set(name, dir);
    const files = walkFiles(dir);
    const native = files.find((f) => f.endsWith('.node') || path.basename(f) === 'binding.gyp');
    const by = through.map((p) => ` (through "${p}")`).join('');
    if (native) {
      const what = `imports native module "${name}"${by} (${posixRelative(dir, native)}): compiled add-ons cannot run in the service; use a pure JavaScript package, or leave it out with playwright.exclude: ["${at}"]`;
      this.refusals.push(`${this.chain(via.from, via.line)}: ${what}`);
      return;
    }
    for (const f of files) this.files.set(`${at}/${posixRelative(dir, f)}`, f);
    const manifest = readPackageJson(dir) ?? {};
    const deps = Object.keys((manifest.dependencies as Record<string, string> | undefined) ?? {});
    const optional = Object.keys((manifest.optionalDependencies as Record<string, string> | undefined) ?? {});
    for (const dep of [...deps, ...optional]) {
      if (PROVIDED_PACKAGES.has(dep) || this.packages.has(dep)) continue;
      const depDir = findPackageDir(dep, dir);
      if (depDir) this.addPackage(dep, depDir, via, [...through, name]);
      else if (!optional.includes(dep))
        this.refusals.push(
          `${this.chain(via.from, via.line)}: package "${name}" depends on "${dep}", which is not installed`,
        );
    }
  }
}
