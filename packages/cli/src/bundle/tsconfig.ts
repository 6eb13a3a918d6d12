import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { resolveFile } from './resolve';

// tsconfig as Playwright reads it (its transform's tsconfig loader and resolve hook): the config's
// `tsconfig` option when set, else the tsconfig.json (or jsconfig.json) nearest a file's folder;
// `extends` (relative, or a package's in the folder's node_modules) merged under the file's own
// options; `paths` relative to `baseUrl`, or to the tsconfig that declares them; a `baseUrl` alone
// maps every bare specifier under it. A bare import a mapping resolves is a local file; the tsconfig
// files read on the way are what the sandbox's Playwright needs to resolve it the same way.

interface PathMapping {
  key: string;
  values: string[];
}

/** One tsconfig, its `extends` merged: what resolving an import needs, and the files it was read from. */
export interface LoadedTsconfig {
  files: string[];
  allowJs: boolean;
  pathsBase: string | undefined;
  paths: PathMapping[];
}

/** JSON with comments and trailing commas (what tsconfig files are), parsed. */
function parseJsonc(text: string): unknown {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else out += c;
  }
  return JSON.parse(out.replace(/^\uFEFF/, '').replace(/,(\s*[}\]])/g, '$1'));
}

/** Where an `extends` entry leads, as Playwright finds it. */
function resolveExtends(from: string, entry: string): string {
  const dir = path.dirname(from);
  const withJson = entry.endsWith('.json') ? entry : `${entry}.json`;
  const direct = path.resolve(dir, withJson);
  if (existsSync(direct) || entry.startsWith('.') || path.isAbsolute(entry)) return direct;
  const packageDir = path.join(dir, 'node_modules', entry);
  const candidates = [path.join(dir, 'node_modules', withJson)];
  try {
    const field = (JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { tsconfig?: unknown })
      .tsconfig;
    if (typeof field === 'string') candidates.push(path.resolve(packageDir, field));
  } catch {
    // no package.json: its tsconfig.json, if any
  }
  candidates.push(path.join(packageDir, 'tsconfig.json'));
  return candidates.find((c) => existsSync(c)) ?? direct;
}

type Raw = {
  extends?: string | string[];
  compilerOptions?: { allowJs?: boolean; baseUrl?: string; paths?: Record<string, string[]> };
};

interface Merged {
  allowJs?: boolean;
  paths?: { mapping: Record<string, string[]>; base: string };
  baseUrl?: string;
}

function loadMerged(file: string, files: string[], seen: Set<string>): Merged {
  if (seen.has(file) || !existsSync(file)) return {};
  seen.add(file);
  files.push(file);
  const raw = parseJsonc(readFileSync(file, 'utf8')) as Raw;
  const merged: Merged = {};
  const bases = Array.isArray(raw.extends) ? raw.extends : raw.extends ? [raw.extends] : [];
  for (const base of bases) Object.assign(merged, loadMerged(resolveExtends(file, base), files, seen));
  const options = raw.compilerOptions ?? {};
  if (options.allowJs !== undefined) merged.allowJs = options.allowJs;
  if (options.paths !== undefined) merged.paths = { mapping: options.paths, base: path.dirname(file) };
  if (options.baseUrl !== undefined) merged.baseUrl = path.resolve(path.dirname(file), options.baseUrl);
  return merged;
}

/** A tsconfig file and those it extends, read as Playwright reads them; a parse error is thrown with the file named. */
export function loadTsconfig(file: string): LoadedTsconfig {
  const files: string[] = [];
  let merged: Merged;
  try {
    merged = loadMerged(file, files, new Set());
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as Error).message}`, { cause: e });
  }
  const paths = Object.entries(merged.paths?.mapping ?? {}).map(([key, values]) => ({ key, values }));
  if (merged.baseUrl !== undefined) paths.push({ key: '*', values: ['*'] });
  return { files, allowJs: merged.allowJs ?? false, pathsBase: merged.baseUrl ?? merged.paths?.base, paths };
}

/** The file of one of `names` nearest `dir` (tsconfig.json or jsconfig.json by default), looking no higher than `top`; null when none. */
export function nearestFile(dir: string, top: string, names = ['tsconfig.json', 'jsconfig.json']): string | null {
  for (let current = dir; ; current = path.dirname(current)) {
    for (const name of names) if (existsSync(path.join(current, name))) return path.join(current, name);
    if (current === top || path.dirname(current) === current || !current.startsWith(top)) return null;
  }
}

/** What a bare `specifier` imported by `fromFile` maps to under `tsconfig`'s paths (the longest prefix wins), or null. */
export function resolveMapped(tsconfig: LoadedTsconfig, specifier: string, fromFile: string): string | null {
  if (!/\.(ts|tsx|mts|cts)$/.test(fromFile) && !tsconfig.allowJs) return null;
  const base = tsconfig.pathsBase;
  if (base === undefined) return null;
  let best: string | null = null;
  let bestPrefix = -1;
  for (const { key, values } of tsconfig.paths) {
    const star = key.indexOf('*');
    const [prefix, suffix] = star < 0 ? [key, ''] : [key.slice(0, star), key.slice(star + 1)];
    if (star < 0 ? specifier !== key : !specifier.startsWith(prefix) || !specifier.endsWith(suffix)) continue;
    if (prefix.length <= bestPrefix) continue;
    const matched = star < 0 ? specifier : specifier.slice(prefix.length, specifier.length - suffix.length);
    for (const value of values) {
      const found = resolveFile(path.resolve(base, value.replace('*', matched)));
      if (found) {
        best = found;
        bestPrefix = prefix.length;
      }
    }
  }
  return best;
}
