import { validateProjectFile } from './project-file';

// The step language as a project file gives it: here, the `expectScreenshot` action's fields.

/** A project file whose one test runs `goto /` and then `step`; the errors of that step, or none. */
function errorsOf(step: Record<string, unknown>): Array<{ path: string; message: string }> {
  const checked = validateProjectFile({
    slug: 'shop',
    name: 'Shop',
    baseUrl: 'https://shop.example',
    suites: [{ slug: 'smoke', tests: [{ key: 't', name: 'T', steps: [{ action: 'goto', url: '/' }, step] }] }],
  });
  return checked.ok ? [] : checked.errors;
}

const shot = (fields: Record<string, unknown>) => ({ action: 'expectScreenshot', ...fields });

it("accepts a screenshot of the page or of an element, with Playwright's options", () => {
  expect(errorsOf(shot({ name: 'home' }))).toEqual([]);
  expect(errorsOf(shot({ name: 'Home_page-2', fullPage: true, mask: ['#clock', '.ad'], threshold: 0.3 }))).toEqual([]);
  expect(
    errorsOf(shot({ name: 'h', selector: 'h1', maxDiffPixels: 10, maxDiffPixelRatio: 0.01, timeoutMs: 10_000 })),
  ).toEqual([]);
  expect(errorsOf(shot({ name: 'x'.repeat(100) }))).toEqual([]);
});

it.each([
  ['no name', {}, '/suites/0/tests/0/steps/1/name', 'is required'],
  ['a name that climbs', { name: '../x' }, '/suites/0/tests/0/steps/1/name', 'must match pattern'],
  ['a name with a folder', { name: 'a/b' }, '/suites/0/tests/0/steps/1/name', 'must match pattern'],
  ['a name with its extension', { name: 'home.png' }, '/suites/0/tests/0/steps/1/name', 'must match pattern'],
  ['a name of a dot', { name: '.' }, '/suites/0/tests/0/steps/1/name', 'must match pattern'],
  ['a name over 100 characters', { name: 'x'.repeat(101) }, '/suites/0/tests/0/steps/1/name', 'must match pattern'],
  ['a name with a space', { name: 'home page' }, '/suites/0/tests/0/steps/1/name', 'must match pattern'],
  ['a name with a variable', { name: '{{vars.PAGE}}' }, '/suites/0/tests/0/steps/1/name', 'must match pattern'],
  ['a name starting with a dash', { name: '-home' }, '/suites/0/tests/0/steps/1/name', 'must match pattern'],
  ['a threshold over 1', { name: 'h', threshold: 1.5 }, '/suites/0/tests/0/steps/1/threshold', 'must be <= 1'],
  [
    'a negative pixel allowance',
    { name: 'h', maxDiffPixels: -1 },
    '/suites/0/tests/0/steps/1/maxDiffPixels',
    'must be >= 0',
  ],
  [
    'a fractional pixel allowance',
    { name: 'h', maxDiffPixels: 1.5 },
    '/suites/0/tests/0/steps/1/maxDiffPixels',
    'must be integer',
  ],
  ['an empty mask', { name: 'h', mask: [] }, '/suites/0/tests/0/steps/1/mask', 'must NOT have fewer than 1 items'],
  [
    'an empty mask selector',
    { name: 'h', mask: [''] },
    '/suites/0/tests/0/steps/1/mask/0',
    'must NOT have fewer than 1 characters',
  ],
  [
    'a field of another matcher',
    { name: 'h', animations: 'allow' },
    '/suites/0/tests/0/steps/1/animations',
    'is not an allowed field',
  ],
  [
    'fullPage of an element',
    { name: 'h', selector: 'h1', fullPage: true },
    '/suites/0/tests/0/steps/1/fullPage',
    'only valid without selector',
  ],
])('refuses %s', (_, fields, path, message) => {
  const errors = errorsOf(shot(fields));
  expect(errors).toEqual([{ path, message: expect.stringContaining(message) as string }]);
});
