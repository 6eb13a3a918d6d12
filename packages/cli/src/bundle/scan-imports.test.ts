import { scanImports } from './scan-imports';

const specifiers = (source: string) => scanImports(source).map((r) => r.specifier);

describe('scanImports', () => {
  it('finds static imports, re-exports, import() and require() of a literal, with their lines', () => {
    const source = [
      "import { test } from '@playwright/test';",
      'import Login, { a } from "./pages/login";',
      "import * as data from './data.json';",
      "import './setup';",
      "export { b } from './b';",
      "export * from './c';",
      "const d = await import('./d');",
      "const e = require('e-package');",
      'const f = import(`./f`);',
      "import g = require('./g');",
    ].join('\n');
    expect(scanImports(source)).toEqual([
      { specifier: '@playwright/test', line: 1 },
      { specifier: './pages/login', line: 2 },
      { specifier: './data.json', line: 3 },
      { specifier: './setup', line: 4 },
      { specifier: './b', line: 5 },
      { specifier: './c', line: 6 },
      { specifier: './d', line: 7 },
      { specifier: 'e-package', line: 8 },
      { specifier: './f', line: 9 },
      { specifier: './g', line: 10 },
    ]);
  });

  it('skips imports in comments, strings, templates and regular expressions, and type-only ones', () => {
    const source = [
      "// import x from './commented';",
      "/* require('./block') */",
      'const s = "import y from \'./in-string\'";',
      "const t = `require('./in-template') ${ require('./in-expression') }`;",
      "const r = /import z from './in-regex'/;",
      "import type { T } from './types';",
      "export type { U } from './types2';",
      'const dyn = import(`./pages/${name}`);',
      "obj.require('./method');",
      "const real = require('./real');",
    ].join('\n');
    expect(specifiers(source)).toEqual(['./in-expression', './real']);
  });

  it('reads multi-line imports and division after a value without taking it for a regex', () => {
    const source = [
      'const half = total / 2; const other = x / y;',
      'import {',
      '  a,',
      '  b,',
      "} from './multi';",
    ].join('\n');
    expect(scanImports(source)).toEqual([{ specifier: './multi', line: 5 }]);
  });
});
