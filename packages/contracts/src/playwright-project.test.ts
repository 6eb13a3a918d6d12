import { isSnapshotFile, needsBundle } from './playwright-project';
import { validateProjectFile } from './project-file';

const base = { slug: 'shop', name: 'Shop', baseUrl: 'https://shop.example' };
const steps = { slug: 'smoke', name: 'Smoke', tests: [{ key: 't', name: 'T', steps: [{ action: 'goto', url: '/' }] }] };

describe('isSnapshotFile', () => {
  it('takes images and text in the bundle only, never code, node_modules, climbing or odd paths', () => {
    const yes = ['e2e/a.spec.ts-snapshots/home-chromium-linux.png', 'shots/a.JPG', 'b.jpeg', 'c.txt'];
    const no = ['e2e/helpers.ts', 'a/data.json', 'node_modules/x/a.png', '../a.png', 'a/./b.png', '/a.png'];
    const odd = ['a\nb.png', 'a\rb.png', 'a\u0000.png', 'a\\b.png', `${'a'.repeat(1_021)}.png`];
    expect(yes.filter(isSnapshotFile)).toEqual(yes);
    expect([...no, ...odd].filter(isSnapshotFile)).toEqual([]);
  });
});

describe('the playwright section of a project file', () => {
  it('accepts the design example: grep, files, project selectors beside a step suite; names default to slugs', () => {
    const checked = validateProjectFile({
      ...base,
      playwright: { config: 'e2e/playwright.config.ts', include: ['e2e/fixtures/**'], exclude: ['e2e/legacy/**'] },
      suites: [
        steps,
        { slug: 'tagged', name: 'Tagged', playwright: { grep: '@smoke', grepInvert: '@slow' } },
        { slug: 'checkout', playwright: { files: ['e2e/tests/checkout/**'] } },
        { slug: 'mobile', playwright: { project: 'mobile' } },
        { slug: 'all', playwright: {} },
      ],
    });
    if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
    expect(checked.value.suites.map((s) => [s.slug, s.name, s.tests.length])).toEqual([
      ['smoke', 'Smoke', 1],
      ['tagged', 'Tagged', 0],
      ['checkout', 'checkout', 0],
      ['mobile', 'mobile', 0],
      ['all', 'all', 0],
    ]);
    // A validated file reads as valid again (how a stored deployment is read).
    expect(validateProjectFile(checked.value).ok).toBe(true);
    expect(needsBundle(checked.value)).toBe(true);
    expect(needsBundle({ ...base, suites: [steps] })).toBe(false);
  });

  it('refuses a suite with both or neither, a playwright suite without the section, a grep that does not compile', () => {
    const checked = validateProjectFile({
      ...base,
      suites: [{ ...steps, playwright: {} }, { slug: 'none' }, { slug: 'pw', playwright: { grep: '(' } }],
    });
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.errors.map((e) => e.path)).toEqual([
      '/suites/0',
      '/suites/0/playwright',
      '/suites/1',
      '/suites/2/playwright',
      '/suites/2/playwright/grep',
    ]);
    expect(checked.errors[3]?.message).toContain('top-level playwright section');
  });

  it('refuses an absolute config path and unknown selector fields', () => {
    const checked = validateProjectFile({
      ...base,
      playwright: { config: '/etc/playwright.config.ts' },
      suites: [{ slug: 'pw', playwright: { tag: '@x' } }],
    });
    expect(checked.ok).toBe(false);
  });

  it('keeps existing files valid', () => {
    expect(validateProjectFile({ ...base, suites: [steps] }).ok).toBe(true);
  });
});
