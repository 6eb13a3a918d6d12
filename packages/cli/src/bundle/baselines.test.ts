import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { addBaselines } from './baselines';
import { planBundle } from './collect';
import { Collector } from './collector';

/** A directory holding `files` (path → text), its real path. */
function tree(files: Record<string, string>): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'testrun-baselines-')));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

const PROJECT = {
  'testrun.yaml': '',
  'e2e/playwright.config.ts': 'export default {};\n',
  'e2e/home.spec.ts': "import { test } from '@playwright/test';\n",
  'e2e/home.spec.ts-snapshots/home-chromium-linux.png': 'png',
  'e2e/home.spec.ts-snapshots/title-chromium-linux.txt': 'text',
  'e2e/home.spec.ts-snapshots/sub/hero-chromium-darwin.jpeg': 'jpeg',
  'e2e/home.spec.ts-snapshots/helpers.ts': 'export const x = 1;\n',
  'e2e/home.spec.ts-snapshots/data.json': '{}',
  'e2e/other.ts-snapshots/not-a-test.png': 'png',
  'shots/page.png': 'png',
  'shots/page.json': '{}',
  'shots/node_modules/pkg/logo.png': 'png',
};

function packed(dir: string, importBaselines?: boolean | string[]) {
  const section = { config: 'e2e/playwright.config.ts', ...(importBaselines === undefined ? {} : { importBaselines }) };
  return planBundle(path.join(dir, 'testrun.yaml'), section);
}

describe('packing committed baselines (playwright.importBaselines)', () => {
  it('packs the snapshot files of the test files’ -snapshots folders only when asked', () => {
    const dir = tree(PROJECT);
    expect([...packed(dir).files.keys()].filter((f) => f.includes('snapshots'))).toEqual([]);
    const plan = packed(dir, true);
    expect(plan.refusals).toEqual([]);
    expect([...plan.files.keys()].filter((f) => f.includes('snapshots')).sort()).toEqual([
      'e2e/home.spec.ts-snapshots/home-chromium-linux.png',
      'e2e/home.spec.ts-snapshots/sub/hero-chromium-darwin.jpeg',
      'e2e/home.spec.ts-snapshots/title-chromium-linux.txt',
    ]);
    expect(plan.files.has('shots/page.png')).toBe(false);
  });

  it('packs the files globs match as well, snapshot files only, never under node_modules', () => {
    const dir = tree(PROJECT);
    const files = [...packed(dir, ['shots/**']).files.keys()];
    expect(files).toContain('shots/page.png');
    expect(files).toContain('e2e/home.spec.ts-snapshots/home-chromium-linux.png');
    expect(files).not.toContain('shots/page.json');
    expect(files.filter((f) => f.includes('node_modules'))).toEqual([]);
  });

  it('leaves out a symbolic link pretending to be a snapshot, or a snapshots folder that is one, and says so', () => {
    const dir = tree(PROJECT);
    symlinkSync('/etc/shadow', path.join(dir, 'e2e/home.spec.ts-snapshots/shadow-chromium-linux.png'));
    symlinkSync('/etc/passwd', path.join(dir, 'shots/passwd.png'));
    writeFileSync(path.join(dir, 'e2e/second.spec.ts'), '');
    symlinkSync('/etc', path.join(dir, 'e2e/second.spec.ts-snapshots'));
    const plan = packed(dir, ['shots/**']);
    const files = [...plan.files.keys()];
    expect(files).not.toContain('e2e/home.spec.ts-snapshots/shadow-chromium-linux.png');
    expect(files).not.toContain('shots/passwd.png');
    expect(files.filter((f) => f.startsWith('e2e/second.spec.ts-snapshots'))).toEqual([]);
    expect(plan.warnings.join('\n')).toMatch(/left out 3 symbolic links .*shadow-chromium-linux\.png/);
  });

  it('refuses past the caps: an oversized image, too many files, too many bytes', () => {
    const dir = tree({
      'a.spec.ts': '',
      'a.spec.ts-snapshots/big.png': 'x'.repeat(11),
      'a.spec.ts-snapshots/b.png': 'x',
      'a.spec.ts-snapshots/c.png': 'x',
    });
    const run = (limits: { maxFiles: number; maxBytes: number; maxFileBytes: number }) => {
      const collector = new Collector(dir);
      addBaselines(collector, true, [path.join(dir, 'a.spec.ts')], [], limits);
      return collector;
    };
    const big = run({ maxFiles: 10, maxBytes: 100, maxFileBytes: 10 });
    expect(big.refusals).toEqual([
      expect.stringMatching(/a\.spec\.ts-snapshots\/big\.png is 11 bytes, over the cap of 10/),
    ]);
    expect(big.files.size).toBe(0);
    expect(run({ maxFiles: 2, maxBytes: 100, maxFileBytes: 100 }).refusals).toEqual([
      expect.stringMatching(/3 snapshot files, over the cap of 2 \(BASELINE_IMPORT_LIMITS\.maxFiles\)/),
    ]);
    expect(run({ maxFiles: 10, maxBytes: 12, maxFileBytes: 100 }).refusals).toEqual([
      expect.stringMatching(/13 bytes, over the cap of 12 bytes \(BASELINE_IMPORT_LIMITS\.maxBytes\)/),
    ]);
    expect(run({ maxFiles: 10, maxBytes: 100, maxFileBytes: 100 }).files.size).toBe(3);
  });
});
