import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { PROVIDED_PACKAGES } from '@testrun/contracts';

// Node's resolution as the bundle needs it, without running anything: a relative import to a file
// (TypeScript's extensions, `.js` written for a `.ts`, index files, a directory's package.json
// `main`), a bare import to the package directory it names in the nearest node_modules (checking
// the subpath against its `exports`, `main` or files).

const EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs', '.json'];
/** What a `.js`-style extension may stand for in TypeScript sources. */
const TS_FOR_JS: Record<string, string[]> = {
  '.js': ['.ts', '.tsx'],
  '.jsx': ['.tsx'],
  '.mjs': ['.mts'],
  '.cjs': ['.cts'],
};

/** Where an import leads: a local file, a package, something the runtime provides, or nowhere. */
export type Resolution =
  | { kind: 'file'; file: string }
  | { kind: 'package'; name: string; dir: string }
  | { kind: 'provided' }
  | { kind: 'missing'; why: string };

const isFile = (p: string) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};
const isDir = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** The file a path names: itself, with an extension, its TypeScript source, or its directory's entry. */
export function resolveFile(target: string): string | null {
  if (isFile(target)) return target;
  const ext = path.extname(target);
  for (const ts of TS_FOR_JS[ext] ?? [])
    if (isFile(target.slice(0, -ext.length) + ts)) return target.slice(0, -ext.length) + ts;
  for (const e of EXTENSIONS) if (isFile(target + e)) return target + e;
  if (!isDir(target)) return null;
  const main = readPackageJson(target)?.main;
  if (typeof main === 'string') {
    const entry = resolveFile(path.join(target, main));
    if (entry) return entry;
  }
  for (const e of EXTENSIONS) if (isFile(path.join(target, `index${e}`))) return path.join(target, `index${e}`);
  return null;
}

/** A directory's package.json, parsed (null when there is none or it is not JSON). */
export function readPackageJson(dir: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A bare specifier's package name and subpath: `@scope/pkg/sub` → `@scope/pkg`, `./sub`. */
function splitPackage(specifier: string): { name: string; subpath: string } {
  const parts = specifier.split('/');
  const count = specifier.startsWith('@') ? 2 : 1;
  const rest = parts.slice(count).join('/');
  return { name: parts.slice(0, count).join('/'), subpath: rest === '' ? '.' : `./${rest}` };
}

/** The package directory `name` resolves to from `fromDir` (the nearest node_modules up the tree), real path. */
export function findPackageDir(name: string, fromDir: string): string | null {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return realpathSync(candidate);
    if (path.dirname(dir) === dir) return null;
  }
}

/** Whether a package's `exports` lets `subpath` be imported (keys, `*` patterns). */
function exportsAllow(exportsField: unknown, subpath: string): boolean {
  if (typeof exportsField === 'string' || Array.isArray(exportsField)) return subpath === '.';
  if (typeof exportsField !== 'object' || exportsField === null) return false;
  const keys = Object.keys(exportsField);
  // Conditions only (no subpaths): the package's `.`.
  if (!keys.some((k) => k.startsWith('.'))) return subpath === '.';
  return keys.some((key) => {
    if (key === subpath) return true;
    const star = key.indexOf('*');
    return star >= 0 && subpath.startsWith(key.slice(0, star)) && subpath.endsWith(key.slice(star + 1));
  });
}

/** Where `specifier`, imported by `fromFile`, leads. */
export function resolveImport(specifier: string, fromFile: string): Resolution {
  if (specifier.startsWith('node:') || builtinModules.includes(specifier)) return { kind: 'provided' };
  if (specifier.startsWith('.') || path.isAbsolute(specifier)) {
    const file = resolveFile(path.resolve(path.dirname(fromFile), specifier));
    return file ? { kind: 'file', file } : { kind: 'missing', why: 'no such file' };
  }
  const { name, subpath } = splitPackage(specifier);
  if (PROVIDED_PACKAGES.has(name)) return { kind: 'provided' };
  const dir = findPackageDir(name, path.dirname(fromFile));
  if (!dir) return { kind: 'missing', why: `package "${name}" is not installed in a node_modules above it` };
  const manifest = readPackageJson(dir) ?? {};
  if (manifest.exports !== undefined) {
    if (!exportsAllow(manifest.exports, subpath))
      return { kind: 'missing', why: `package "${name}" does not export "${subpath}"` };
  } else if (subpath !== '.' ? !resolveFile(path.join(dir, subpath)) : !resolveFile(dir)) {
    return { kind: 'missing', why: `package "${name}" has no "${subpath}" (no main or index file)` };
  }
  return { kind: 'package', name, dir };
}
