import { isStepBaselinePath, stepBaselinePath } from './step-baselines';

const test = { suiteSlug: 'checkout', testKey: 'place-order.v2' };

it("names a step test's baseline by its suite, its key and the screenshot's name, .png added", () => {
  expect(stepBaselinePath(test, 'home')).toBe('/steps/checkout/place-order.v2/home.png');
  expect(stepBaselinePath({ suiteSlug: 'a', testKey: 'A_1' }, 'x-Y_2')).toBe('/steps/a/A_1/x-Y_2.png');
  expect(isStepBaselinePath(stepBaselinePath(test, 'home'))).toBe(true);
});

it("never names a Playwright snapshot's path (relative to its bundle) a step test's", () => {
  for (const path of ['steps/checkout/home.png', 'e2e/home.spec.ts-snapshots/home-chromium-linux.png', 'steps:x.png'])
    expect(isStepBaselinePath(path)).toBe(false);
});

it.each([
  ['a name that climbs', test, '../x'],
  ['a name with a folder', test, 'a/b'],
  ['a name with its extension', test, 'home.png'],
  ['an empty name', test, ''],
  ['a name over 100 characters', test, 'x'.repeat(101)],
  ['a key that is ..', { ...test, testKey: '..' }, 'home'],
  ['a key with a slash', { ...test, testKey: 'a/b' }, 'home'],
  ['a suite slug with a slash', { ...test, suiteSlug: 'a/b' }, 'home'],
])('refuses %s', (_, named, name) => {
  expect(() => stepBaselinePath(named, name)).toThrow(/^not a /);
});
