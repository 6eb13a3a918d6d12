// What a TypeScript or JavaScript file imports, read without running it: static imports and
// re-exports, `import()` and `require()` of a literal. Comments, strings, template literals and
// regular expression literals are skipped, so an import in one of them does not count; type-only
// imports and re-exports are left out (they vanish when TypeScript compiles).

/** One import of a file: its specifier and the line (from 1) it is on. */
export interface ImportRef {
  specifier: string;
  line: number;
}

/** The source with comments blanked and every string literal's content blanked, and the literals by offset. */
interface Masked {
  code: string;
  literals: Map<number, string>;
}

const IDENTIFIER = /[\w$]/;

/** Whether a `/` at `at` starts a regular expression literal (by the code before it). */
function startsRegex(code: string[], at: number): boolean {
  let i = at - 1;
  while (i >= 0 && /\s/.test(code[i] ?? '')) i--;
  if (i < 0) return true;
  const prev = code[i] ?? '';
  if (prev === ')' || prev === ']' || prev === '}') return false;
  if (!IDENTIFIER.test(prev)) return true;
  let start = i;
  while (start > 0 && IDENTIFIER.test(code[start - 1] ?? '')) start--;
  return /^(return|typeof|case|do|else|in|of|new|delete|void|throw|instanceof|yield|await)$/.test(
    code.slice(start, i + 1).join(''),
  );
}

/** Blanks `code[from..to)` (keeping newlines, so offsets and lines stay). */
function blank(code: string[], from: number, to: number): void {
  for (let i = from; i < to; i++) if (code[i] !== '\n') code[i] = ' ';
}

/** The end (exclusive) of a quoted string starting at `at`, and its value. */
function readQuoted(src: string, at: number): { end: number; value: string } {
  const quote = src[at];
  let value = '';
  let i = at + 1;
  while (i < src.length && src[i] !== quote && src[i] !== '\n') {
    if (src[i] === '\\') {
      value += src[i + 1] ?? '';
      i += 2;
    } else value += src[i++] ?? '';
  }
  return { end: Math.min(i + 1, src.length), value };
}

/** The end of a regular expression literal starting at `at` (classes and escapes respected). */
function readRegex(src: string, at: number): number {
  let i = at + 1;
  let inClass = false;
  while (i < src.length && src[i] !== '\n') {
    const c = src[i];
    if (c === '\\') i++;
    else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '/' && !inClass) return i + 1;
    i++;
  }
  return i;
}

function mask(src: string): Masked {
  // UTF-16 units, as the string's own offsets count them.
  const code = src.split('');
  const literals = new Map<number, string>();
  // Open template literals: the brace depth of each `${` we are inside.
  const templates: number[] = [];
  let depth = 0;
  let i = 0;
  const readTemplate = (from: number): number => {
    // From inside a template's text: to its end (`) or the start of a `${`.
    let j = from;
    let value = '';
    while (j < src.length && src[j] !== '`') {
      if (src[j] === '\\') j++;
      else if (src[j] === '$' && src[j + 1] === '{') {
        blank(code, from, j);
        templates.push(depth);
        return j + 2;
      } else value += src[j] ?? '';
      j++;
    }
    if (src[from - 1] === '`') literals.set(from - 1, value);
    blank(code, from, j);
    return j + 1;
  };
  while (i < src.length) {
    const c = src[i];
    const next = src[i + 1];
    if (c === '/' && next === '/') {
      const end = src.indexOf('\n', i);
      const to = end < 0 ? src.length : end;
      blank(code, i, to);
      i = to;
    } else if (c === '/' && next === '*') {
      const end = src.indexOf('*/', i + 2);
      const to = end < 0 ? src.length : end + 2;
      blank(code, i, to);
      i = to;
    } else if (c === '"' || c === "'") {
      const { end, value } = readQuoted(src, i);
      literals.set(i, value);
      blank(code, i + 1, end - 1);
      i = end;
    } else if (c === '`') i = readTemplate(i + 1);
    else if (c === '/' && startsRegex(code, i)) {
      const end = readRegex(src, i);
      blank(code, i + 1, end - 1);
      i = end;
    } else if (c === '{') {
      depth++;
      i++;
    } else if (c === '}') {
      if (templates.length > 0 && templates.at(-1) === depth) {
        templates.pop();
        i = readTemplate(i + 1);
      } else {
        depth--;
        i++;
      }
    } else i++;
  }
  return { code: code.join(''), literals };
}

const PATTERNS: RegExp[] = [
  // import x from '…', import { a } from '…', import * as n from '…' (not `import type`)
  /(?<![.\w$])import\s+(?!type[\s{*])[^;'"`()]*?\bfrom\s*(?=['"])/g,
  // import '…'
  /(?<![.\w$])import\s*(?=['"])/g,
  // export { a } from '…', export * from '…' (not `export type`)
  /(?<![.\w$])export\s+(?!type[\s{*])(?:\*|\{)[^;'"`()]*?\bfrom\s*(?=['"])/g,
  // import('…'), require('…')
  /(?<![.\w$])(?:import|require)\s*\(\s*(?=['"`])/g,
];

/** Every import of `source` with a literal specifier, in the order they appear. */
export function scanImports(source: string): ImportRef[] {
  const { code, literals } = mask(source);
  const found = new Map<number, ImportRef>();
  for (const pattern of PATTERNS) {
    for (const match of code.matchAll(pattern)) {
      const at = match.index + match[0].length;
      const specifier = literals.get(at);
      if (specifier === undefined || (code[at] === '`' && source.slice(at, at + specifier.length + 2).includes('${')))
        continue;
      found.set(at, { specifier, line: source.slice(0, at).split('\n').length });
    }
  }
  return [...found.entries()].sort(([a], [b]) => a - b).map(([, ref]) => ref);
}
