import { mkdtempSync, mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { classifyAttempt } from './outcome';
import { placeBaselines } from './place-baselines';
import { keptSnapshots, missingSnapshotPath, pathInBundle, snapshotFindings } from './snapshots';
import type { PlaywrightAttachment, PlaywrightAttempt } from './types';

const BUNDLE = '/scratch/bundle';
const inside = (p: string) => p.replace(/^\/work\//, '/scratch/');
const SNAPS = 'e2e/tests/home.spec.ts-snapshots';

function attempt(overrides: Partial<PlaywrightAttempt>): PlaywrightAttempt {
  return {
    retry: 0,
    status: 'failed',
    expectedStatus: 'passed',
    durationMs: 10,
    annotations: [],
    errors: [],
    steps: [],
    attachments: [],
    stdout: '',
    stderr: '',
    ...overrides,
  };
}
const attemptOf = (a: Pick<PlaywrightAttempt, 'errors' | 'attachments'>) =>
  attempt({ ...a, snapshots: snapshotFindings(a, BUNDLE, inside) });
const missing = (p: string) => ({
  message: `Error: A snapshot doesn't exist at ${p}, writing actual.\n\n  4 |   await expect(page)`,
});
const file = (name: string, p: string): PlaywrightAttachment => ({
  name,
  contentType: 'image/png',
  automatic: false,
  path: p,
});

describe('missingSnapshotPath', () => {
  it("reads the path of Playwright's message, with or without its colours, and nothing else", () => {
    expect(missingSnapshotPath(missing('/work/bundle/a b/x-linux.png').message)).toBe('/work/bundle/a b/x-linux.png');
    expect(missingSnapshotPath("\u001b[31mA snapshot doesn't exist at /w/x.png, writing actual.\u001b[39m")).toBe(
      '/w/x.png',
    );
    expect(missingSnapshotPath("A snapshot doesn't exist at /w/x.png.")).toBeNull();
    expect(missingSnapshotPath('Error: expect(page).toHaveScreenshot(expected) failed')).toBeNull();
  });
});

describe('pathInBundle', () => {
  it.each([
    ['a snapshot path', `${BUNDLE}/${SNAPS}/home-linux.png`, `${SNAPS}/home-linux.png`],
    ['a parent folder', `${BUNDLE}/../etc/shadow`, null],
    ['another root', '/etc/shadow', null],
    ['the bundle itself', BUNDLE, null],
    ['a neighbour by ..', `${BUNDLE}/a/../../bundle2/x.png`, null],
    ['a line break', `${BUNDLE}/a\nb.png`, null],
    ['2,000 characters', `${BUNDLE}/${'x'.repeat(2000)}.png`, null],
    ['a text snapshot', `${BUNDLE}/${SNAPS}/label-linux.txt`, `${SNAPS}/label-linux.txt`],
    ['a module of the bundle', `${BUNDLE}/e2e/helpers.ts`, null],
    ['a script', `${BUNDLE}/e2e/fixtures.js`, null],
    ['a configuration', `${BUNDLE}/tsconfig.json`, null],
    ['a package', `${BUNDLE}/node_modules/x/logo.png`, null],
  ])('%s', (_label, file, expected) => {
    expect(pathInBundle(BUNDLE, file)).toBe(expected);
  });
});

describe('snapshotFindings', () => {
  it('finds a new snapshot by its message and a changed one by its baseline beside the image taken', () => {
    const found = snapshotFindings(
      {
        errors: [
          missing(`/work/bundle/${SNAPS}/heading-linux.png`),
          { message: 'Error: expect(page).toHaveScreenshot(expected) failed' },
        ],
        attachments: [
          file('heading-expected.png', `${BUNDLE}/${SNAPS}/heading-linux.png`),
          file('heading-actual.png', '/scratch/output/t/heading-actual.png'),
          file('home-expected.png', `${BUNDLE}/${SNAPS}/home-linux.png`),
          file('home-actual.png', '/scratch/output/t/home-actual.png'),
          file('home-diff.png', '/scratch/output/t/home-diff.png'),
        ],
      },
      BUNDLE,
      inside,
    );
    expect(found).toEqual([
      {
        kind: 'new',
        name: 'heading.png',
        path: `${SNAPS}/heading-linux.png`,
        file: `${BUNDLE}/${SNAPS}/heading-linux.png`,
        contentType: 'image/png',
      },
      {
        kind: 'changed',
        name: 'home.png',
        path: `${SNAPS}/home-linux.png`,
        file: '/scratch/output/t/home-actual.png',
        contentType: 'image/png',
      },
    ]);
  });

  it('keeps nothing whose baseline path lies out of the bundle, whatever the sandbox wrote', () => {
    const found = snapshotFindings(
      {
        errors: [missing('/etc/shadow'), missing('/work/bundle/../../root/.ssh/id_rsa')],
        attachments: [file('x-expected.png', '/etc/passwd'), file('x-actual.png', '/scratch/output/x-actual.png')],
      },
      BUNDLE,
      inside,
    );
    expect(found).toEqual([]);
  });

  it("keeps no snapshot at a path Node or Playwright would load as code, so none can carry one deployment's code into another", () => {
    const attempt = {
      errors: [missing('/work/bundle/e2e/helpers.ts'), missing('/work/bundle/playwright.config.mjs')],
      attachments: [
        file('cfg-expected.json', `${BUNDLE}/tsconfig.json`),
        file('cfg-actual.json', '/scratch/output/a.json'),
      ],
    };
    expect(snapshotFindings(attempt, BUNDLE, inside)).toEqual([]);
    // With nothing kept, the test is not passed as new baselines: it does not pass, as under Playwright.
    expect(classifyAttempt(attemptOf(attempt)).status).not.toBe('passed');
  });

  it('needs the image taken beside a changed baseline', () => {
    const found = snapshotFindings(
      { errors: [], attachments: [file('x-expected.png', `${BUNDLE}/x.png`)] },
      BUNDLE,
      inside,
    );
    expect(found).toEqual([]);
  });
});

describe('classifyAttempt of snapshots', () => {
  const fresh = { kind: 'new' as const, name: 'home.png', path: 'h.png', file: '/x', contentType: 'image/png' };
  it('passes a try whose only errors are snapshots written for want of a baseline, naming them', () => {
    const outcome = classifyAttempt(attempt({ errors: [missing('/work/bundle/h.png')], snapshots: [fresh] }));
    expect(outcome).toEqual({
      status: 'passed',
      code: null,
      summary: 'Passed; new baseline awaiting approval: home.png',
    });
  });

  it('fails it expectation_failed under missingBaselines: fail, naming the snapshots kept awaiting approval', () => {
    const only = attempt({ errors: [missing('/work/bundle/h.png')], snapshots: [fresh] });
    expect(classifyAttempt(only, [], 'fail')).toEqual({
      status: 'failed',
      code: 'expectation_failed',
      summary:
        'No baseline yet (missingBaselines: fail) of home.png: the image is kept as new baseline awaiting approval; approve to compare against it',
    });
    expect(classifyAttempt(only, [], 'pass').status).toBe('passed');
    const passing = attempt({ status: 'passed', errors: [] });
    expect(classifyAttempt(passing, [], 'fail').status).toBe('passed');
  });

  it('fails a try with any other error as before, and one without a snapshot found in the bundle', () => {
    const other = attempt({ errors: [missing('/work/bundle/h.png'), { message: 'Error: boom' }], snapshots: [fresh] });
    expect(classifyAttempt(other).status).not.toBe('passed');
    expect(classifyAttempt(attempt({ errors: [missing('/etc/x.png')], snapshots: [] })).status).not.toBe('passed');
  });

  it('fails a changed snapshot screenshot_changed, and a page that never held still as any expect', () => {
    const changed = { ...fresh, kind: 'changed' as const };
    const error = { message: 'Error: expect(page).toHaveScreenshot(expected) failed\n\n  120 pixels are different.' };
    expect(classifyAttempt(attempt({ errors: [error], snapshots: [changed] }))).toMatchObject({
      status: 'failed',
      code: 'screenshot_changed',
    });
    const old = { message: 'Error: Screenshot comparison failed:\n\n  120 pixels are different.' };
    expect(classifyAttempt(attempt({ errors: [old], snapshots: [changed] })).code).toBe('screenshot_changed');
    expect(classifyAttempt(attempt({ errors: [error], snapshots: [] })).code).toBe('expectation_failed');
  });
});

describe('keptSnapshots', () => {
  const found = (kind: 'new' | 'changed', p: string, file = `/x/${p}`) => ({
    kind,
    name: p,
    path: p,
    file,
    contentType: 'image/png',
  });
  it("keeps the last try's findings and an earlier try's new snapshots the retry passed against", () => {
    const first = { snapshots: [found('new', 'a.png'), found('changed', 'b.png'), found('new', 'c.png', '/first/c')] };
    const last = { snapshots: [found('new', 'c.png', '/last/c')] };
    expect(keptSnapshots([first, last]).map((s) => [s.kind, s.path, s.file])).toEqual([
      ['new', 'c.png', '/last/c'],
      ['new', 'a.png', '/x/a.png'],
    ]);
    expect(keptSnapshots([first, {}]).map((s) => s.path)).toEqual(['a.png', 'c.png']);
    expect(keptSnapshots([])).toEqual([]);
  });
});

describe('placeBaselines', () => {
  it('writes each baseline at its path, replacing a file, never through a link or out of the bundle', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'place-'));
    const bundle = path.join(root, 'bundle');
    mkdirSync(path.join(bundle, 'tests'), { recursive: true });
    writeFileSync(path.join(bundle, 'tests', 'old.png'), 'old');
    writeFileSync(path.join(root, 'outside.png'), 'keep');
    symlinkSync(root, path.join(bundle, 'link'));
    symlinkSync(path.join(root, 'outside.png'), path.join(bundle, 'tests', 'linked.png'));
    const placed = await placeBaselines(bundle, [
      { path: 'tests/a-snapshots/new.png', body: Buffer.from('new') },
      { path: 'tests/old.png', body: Buffer.from('replaced') },
      { path: 'tests/linked.png', body: Buffer.from('through') },
      { path: 'link/outside.png', body: Buffer.from('escaped') },
      { path: '../outside.png', body: Buffer.from('escaped') },
      { path: 'tests/helpers.ts', body: Buffer.from('export const planted = true;') },
    ]);
    expect(placed).toBe(3);
    expect(existsSync(path.join(bundle, 'tests/helpers.ts'))).toBe(false);
    expect(readFileSync(path.join(bundle, 'tests/a-snapshots/new.png'), 'utf8')).toBe('new');
    expect(readFileSync(path.join(bundle, 'tests/old.png'), 'utf8')).toBe('replaced');
    expect(readFileSync(path.join(bundle, 'tests/linked.png'), 'utf8')).toBe('through');
    expect(readFileSync(path.join(root, 'outside.png'), 'utf8')).toBe('keep');
    expect(existsSync(path.join(root, 'link'))).toBe(false);
  });
});
