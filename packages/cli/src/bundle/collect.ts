import { existsSync, lstatSync, realpathSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROVIDED_PACKAGES, type PlaywrightSection } from '@testrun/contracts';
import { scanImports } from './scan-imports';
import { findPackageDir, readPackageJson, resolveImport } from './resolve';
import { globToRegExp, posixRelative, walkFiles } from './walk';

// What a bundle holds (docs/CLI.md, "Playwright bundles"): the config, every spec file under its
// directory, everything they import (local modules, JSON, npm packages whole with their
// dependencies), and the `include` globs; or why it cannot be packed.

/**
 * Spec files (`*.spec.ts`, `*.test.mjs`, …) and setup and teardown files (`auth.setup.ts`,
 * `global.teardown.ts`, …): what a config's projects match by Playwright's conventions, which no
 * import reaches (a setup project's test file is named by its `testMatch` only).
 */
const SPEC_FILE = /\.(spec|test|setup|teardown)\.(ts|tsx|js|mjs|cjs|mts|cts)$/;
const SCANNED = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;
const SKIPPED_DIRS = new Set(['node_modules', '.git']);

/** The files of a bundle (bundle path → file on disk), or the refusals that stop it. */
export interface BundlePlan {
  /** The project file's directory, real path: the bundle's root. */
  root: string;
  /** The config, relative to the root. */
  config: string;
  files: Map<string, string>;
  refusals: string[];
  /** The team's installed @playwright/test version, or null. */
  playwrightVersion: string | null;
}

class Collector {
  readonly files = new Map<string, string>();
  readonly refusals: string[] = [];
  private readonly packages = new Map<string, string>();
  private readonly pending: string[] = [];

  constructor(readonly root: string) {}

  /** A local file (real path): packed at its path under the root, and its imports followed. */
  addLocal(file: string): void {
    const rel = posixRelative(this.root, file);
    if (this.files.has(rel)) return;
    this.files.set(rel, file);
    if (SCANNED.test(file)) this.pending.push(file);
  }

  run(): void {
    for (let file = this.pending.shift(); file !== undefined; file = this.pending.shift()) this.follow(file);
  }

  private follow(file: string): void {
    const rel = posixRelative(this.root, file);
    for (const { specifier, line } of scanImports(readFileSync(file, 'utf8'))) {
      const at = `${rel}:${line}`;
      const resolved = resolveImport(specifier, file);
      if (resolved.kind === 'provided') continue;
      if (resolved.kind === 'missing') {
        this.refusals.push(`${at}: cannot resolve import "${specifier}" (${resolved.why})`);
      } else if (resolved.kind === 'package') {
        this.addPackage(resolved.name, resolved.dir, at);
      } else {
        const real = realpathSync(resolved.file);
        const inside = posixRelative(this.root, real);
        if (inside.startsWith('../') || path.isAbsolute(inside))
          this.refusals.push(
            `${at}: imports "${specifier}" (${real}), which is outside the project file's directory ${this.root}; only files under it are bundled`,
          );
        else this.addLocal(real);
      }
    }
  }

  /** A package packed whole at `node_modules/<name>`, then its dependencies; a native one is refused. */
  private addPackage(name: string, dir: string, via: string): void {
    if (this.packages.has(name)) return;
    this.packages.set(name, dir);
    const files = walkFiles(dir);
    const native = files.find((f) => f.endsWith('.node') || path.basename(f) === 'binding.gyp');
    if (native) {
      this.refusals.push(
        `${via}: imports native module "${name}" (${posixRelative(dir, native)}): compiled add-ons cannot run in the service; use a pure JavaScript package`,
      );
      return;
    }
    for (const f of files) this.files.set(`node_modules/${name}/${posixRelative(dir, f)}`, f);
    const manifest = readPackageJson(dir) ?? {};
    const deps = Object.keys((manifest.dependencies as Record<string, string> | undefined) ?? {});
    const optional = Object.keys((manifest.optionalDependencies as Record<string, string> | undefined) ?? {});
    for (const dep of [...deps, ...optional]) {
      if (PROVIDED_PACKAGES.has(dep) || this.packages.has(dep)) continue;
      const depDir = findPackageDir(dep, dir);
      if (depDir) this.addPackage(dep, depDir, `${via} (through "${name}")`);
      else if (!optional.includes(dep))
        this.refusals.push(`${via}: package "${name}" depends on "${dep}", which is not installed`);
    }
  }
}

/** The team's installed @playwright/test version, seen from the config's directory. */
function installedPlaywright(fromDir: string): string | null {
  const dir = findPackageDir('@playwright/test', fromDir);
  const version = dir ? readPackageJson(dir)?.version : undefined;
  return typeof version === 'string' ? version : null;
}

/** Plans the bundle of a project file with a `playwright:` section. Runs nothing of the team's code. */
export function planBundle(projectFile: string, section: PlaywrightSection): BundlePlan {
  const root = realpathSync(path.dirname(path.resolve(projectFile)));
  const collector = new Collector(root);
  const configPath = path.resolve(root, section.config);
  const plan = (config: string): BundlePlan => ({
    root,
    config,
    files: collector.files,
    refusals: collector.refusals,
    playwrightVersion: installedPlaywright(path.dirname(configPath)),
  });
  if (!existsSync(configPath) || !lstatSync(configPath).isFile()) {
    collector.refusals.push(`playwright.config: ${section.config} is not a file under ${root}`);
    return plan(section.config);
  }
  const config = realpathSync(configPath);
  const configRel = posixRelative(root, config);
  if (configRel.startsWith('../')) {
    collector.refusals.push(`playwright.config: ${section.config} is outside the project file's directory ${root}`);
    return plan(section.config);
  }
  collector.addLocal(config);
  for (const spec of walkFiles(path.dirname(config), SKIPPED_DIRS)) if (SPEC_FILE.test(spec)) collector.addLocal(spec);
  const includes = (section.include ?? []).map(globToRegExp);
  if (includes.length > 0)
    for (const file of walkFiles(root, SKIPPED_DIRS))
      if (includes.some((glob) => glob.test(posixRelative(root, file)))) collector.addLocal(file);
  collector.run();
  return plan(configRel);
}
