import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveImport } from './resolve';

/** A directory holding `files` (path → text), its real path. */
function tree(files: Record<string, string>): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'testrun-resolve-')));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe('resolveImport', () => {
  const dir = tree({
    'e2e/spec.ts': '',
    'e2e/pages/login.ts': '',
    'e2e/pages/index.ts': '',
    'e2e/data/users.json': '[]',
    'e2e/util.mts': '',
    'node_modules/plain/package.json': '{ "name": "plain", "main": "lib/main.js" }',
    'node_modules/plain/lib/main.js': '',
    'node_modules/plain/extra.js': '',
    'node_modules/@acme/kit/package.json':
      '{ "name": "@acme/kit", "exports": { ".": "./i.js", "./helpers/*": "./h/*.js" } }',
    'node_modules/@acme/kit/i.js': '',
    'node_modules/broken/package.json': '{ "name": "broken", "main": "gone.js" }',
  });
  const from = path.join(dir, 'e2e/spec.ts');
  const file = (rel: string) => ({ kind: 'file', file: path.join(dir, rel) });

  it('resolves relative imports with TypeScript extensions, .js written for .ts, index files and JSON', () => {
    expect(resolveImport('./pages/login', from)).toEqual(file('e2e/pages/login.ts'));
    expect(resolveImport('./pages/login.js', from)).toEqual(file('e2e/pages/login.ts'));
    expect(resolveImport('./pages', from)).toEqual(file('e2e/pages/index.ts'));
    expect(resolveImport('./data/users.json', from)).toEqual(file('e2e/data/users.json'));
    expect(resolveImport('./util.mjs', from)).toEqual(file('e2e/util.mts'));
    expect(resolveImport('./nothing', from)).toEqual({ kind: 'missing', why: 'no such file' });
  });

  it('resolves packages by main, exports (subpath patterns included) or their files', () => {
    expect(resolveImport('plain', from)).toEqual({
      kind: 'package',
      name: 'plain',
      dir: path.join(dir, 'node_modules/plain'),
    });
    expect(resolveImport('plain/extra', from)).toMatchObject({ kind: 'package', name: 'plain' });
    expect(resolveImport('@acme/kit', from)).toMatchObject({ kind: 'package', name: '@acme/kit' });
    expect(resolveImport('@acme/kit/helpers/money', from)).toMatchObject({ kind: 'package', name: '@acme/kit' });
    expect(resolveImport('@acme/kit/internal', from)).toEqual({
      kind: 'missing',
      why: 'package "@acme/kit" does not export "./internal"',
    });
    expect(resolveImport('broken', from)).toMatchObject({ kind: 'missing' });
    expect(resolveImport('absent', from)).toMatchObject({ kind: 'missing' });
  });

  it('leaves Node built-ins and the Playwright packages to the runtime', () => {
    for (const specifier of ['node:fs', 'path', '@playwright/test', 'playwright', 'playwright-core/lib/x'])
      expect(resolveImport(specifier, from)).toEqual({ kind: 'provided' });
  });
});
