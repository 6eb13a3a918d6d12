import { importSites } from './import-sites';

/** The offset of the n-th (0-based) occurrence of `text` in `content`. */
function at(content: string, text: string, n = 0): number {
  let index = -1;
  for (let i = 0; i <= n; i++) index = content.indexOf(text, index + 1);
  return index;
}

describe('importSites', () => {
  it("finds each dynamic import's keyword, not a method named import or the word in a string or comment", () => {
    const content = [
      "const a = () => import('./a.mjs');",
      'builder.import(1); // import(nothing)',
      "const message = '`import()` takes one or two arguments';",
      'async function b(url) { return await import (url, { with: { type: "json" } }); }',
    ].join('\n');
    expect(importSites(content)).toEqual([at(content, "import('./a.mjs')"), at(content, 'import (url')]);
  });

  it('is empty for a module without dynamic imports', () => {
    expect(importSites("module.exports = require('./x');")).toEqual([]);
  });

  it('refuses a module that may compile a call of import() at run time', () => {
    // Code compiled by eval or the Function constructor inherits the callback V8 loses from a cache.
    expect(importSites('const load = (f) => eval(`import(${JSON.stringify(f)})`);')).toBeNull();
    expect(importSites('const vite = new Function(\'return import("vite")\');')).toBeNull();
    expect(importSites("const F = (async () => {}).constructor; x.constructor('return import(y)');")).toBeNull();
    expect(importSites("globalThis['eval']('import(z)');")).toBeNull();
  });

  it('keeps a module whose eval compiles no call of import(', () => {
    const content =
      "const g = Function('return this')(); const m = '`import()` is not allowed here'; import('./c.mjs');";
    expect(importSites(content)).toEqual([at(content, "import('./c.mjs')")]);
  });

  it('refuses what does not parse as a CommonJS script', () => {
    expect(importSites('export const x = 1;')).toBeNull();
    expect(importSites('const = ;')).toBeNull();
  });
});
