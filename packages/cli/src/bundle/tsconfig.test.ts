import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadTsconfig, nearestFile, resolveMapped } from './tsconfig';

/** A directory holding `files` (path → text), its real path. */
function tree(files: Record<string, string>): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'testrun-tsconfig-')));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe('tsconfig as Playwright reads it', () => {
  const dir = tree({
    'tsconfig.json':
      '{\n  // comments and trailing commas, as tsconfig files have them\n  "extends": "./config/base",\n  "compilerOptions": { "strict": true, },\n}\n',
    'config/base.json':
      '{ "extends": "@acme/tsconfig", "compilerOptions": { /* no baseUrl */ "paths": { "@/*": ["../src/*"], "@/pages/special": ["../src/special.ts"] } } }',
    'config/node_modules/@acme/tsconfig/tsconfig.json': '{ "compilerOptions": { "allowJs": true } }',
    'config/node_modules/@acme/tsconfig/package.json': '{ "name": "@acme/tsconfig" }',
    'src/pages/login.ts': '',
    'src/special.ts': '',
    'e2e/login.spec.ts': '',
    'e2e/helper.js': '',
    'based/tsconfig.json': '{ "compilerOptions": { "baseUrl": "./lib" } }',
    'based/lib/util/index.ts': '',
    'based/e2e/a.spec.ts': '',
  });
  const spec = path.join(dir, 'e2e/login.spec.ts');

  it('finds the nearest tsconfig no higher than the top, and reads its extends chain (relative and a package)', () => {
    expect(nearestFile(path.join(dir, 'e2e'), dir)).toBe(path.join(dir, 'tsconfig.json'));
    expect(nearestFile(path.join(dir, 'src/pages'), path.join(dir, 'src'))).toBeNull();
    const loaded = loadTsconfig(path.join(dir, 'tsconfig.json'));
    expect(loaded.files).toEqual([
      path.join(dir, 'tsconfig.json'),
      path.join(dir, 'config/base.json'),
      path.join(dir, 'config/node_modules/@acme/tsconfig/tsconfig.json'),
    ]);
    expect(loaded.allowJs).toBe(true);
    expect(loaded.pathsBase).toBe(path.join(dir, 'config'));
  });

  it('maps aliases relative to the tsconfig declaring them, the longest prefix first; leaves others alone', () => {
    const loaded = loadTsconfig(path.join(dir, 'tsconfig.json'));
    expect(resolveMapped(loaded, '@/pages/login', spec)).toBe(path.join(dir, 'src/pages/login.ts'));
    expect(resolveMapped(loaded, '@/pages/special', spec)).toBe(path.join(dir, 'src/special.ts'));
    expect(resolveMapped(loaded, '@/pages/none', spec)).toBeNull();
    expect(resolveMapped(loaded, 'lodash', spec)).toBeNull();
    // allowJs (from the package's tsconfig) lets a JavaScript file use the aliases too.
    expect(resolveMapped(loaded, '@/pages/login', path.join(dir, 'e2e/helper.js'))).toBe(
      path.join(dir, 'src/pages/login.ts'),
    );
  });

  it('maps bare imports under a baseUrl alone, and JavaScript files only with allowJs', () => {
    const loaded = loadTsconfig(path.join(dir, 'based/tsconfig.json'));
    const from = path.join(dir, 'based/e2e/a.spec.ts');
    expect(resolveMapped(loaded, 'util', from)).toBe(path.join(dir, 'based/lib/util/index.ts'));
    expect(resolveMapped(loaded, 'util', path.join(dir, 'based/e2e/a.js'))).toBeNull();
  });

  it('names the file it cannot read', () => {
    const bad = tree({ 'tsconfig.json': '{ "compilerOptions": ' });
    expect(() => loadTsconfig(path.join(bad, 'tsconfig.json'))).toThrow(
      `cannot read ${path.join(bad, 'tsconfig.json')}`,
    );
  });
});
