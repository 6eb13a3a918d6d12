import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Every regular file below `dir` (symbolic links and the directories `skip` names are not followed), absolute. */
export function walkFiles(dir: string, skip: ReadonlySet<string> = new Set()): string[] {
  const out: string[] = [];
  const pending = [dir];
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    let names: string[];
    try {
      names = readdirSync(current);
    } catch {
      continue;
    }
    for (const name of names) {
      const full = path.join(current, name);
      const stat = lstatSync(full);
      if (stat.isDirectory() && !skip.has(name)) pending.push(full);
      else if (stat.isFile()) out.push(full);
    }
  }
  return out.sort();
}

/** A path relative to `root` with forward slashes (a bundle's path). */
export function posixRelative(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}

/**
 * A glob (relative, forward slashes) as a regular expression of relative paths: `**` any number of
 * directories, `*` and `?` within one, `{a,b}` alternatives, `@(a|b)`/`?(a|b)` groups.
 */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  const groupEnd: string[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      out += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?' && glob[i + 1] === '(') {
      out += '(?:';
      i++;
      groupEnd.push(')?');
    } else if (c === '@' && glob[i + 1] === '(') {
      out += '(?:';
      i++;
      groupEnd.push(')');
    } else if (c === '?') out += '[^/]';
    else if (c === '{') {
      out += '(?:';
      groupEnd.push(')');
    } else if ((c === '}' || c === ')') && groupEnd.length > 0) out += groupEnd.pop() ?? ')';
    else if ((c === ',' || c === '|') && groupEnd.length > 0) out += '|';
    else out += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}
