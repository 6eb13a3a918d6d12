import type { DiscoveredTest } from '@testrun/contracts';
import { sourceDigests } from './sources';

// A test's source digest covers its own call: from where discovery locates it to the parenthesis
// that closes it (strings, template literals and comments skipped), never the next test.

const FILE = 'tests/a.spec.js';

function spec(body: { first: string; between: string; second: string }): string {
  return [
    "const { test } = require('@playwright/test');",
    "test.describe('group', () => {",
    "  test('first', async ({ page }) => {",
    `    ${body.first}`,
    '  });',
    `  ${body.between}`,
    '});',
    "test('second', async () => {",
    `  ${body.second}`,
    '});',
    '',
  ].join('\n');
}

const at = (line: number, column: number, title: string): DiscoveredTest => ({
  file: FILE,
  line,
  column,
  titlePath: [title],
  project: '',
  tags: [],
  browser: 'chromium',
  setup: false,
});

function digests(text: string, shift = 0): [string | undefined, string | undefined] {
  const tests = [at(3 + shift, 3, 'first'), at(8 + shift, 1, 'second')];
  const out = sourceDigests(tests, new Map([[FILE, text]]));
  return [out.get(tests[0] as DiscoveredTest), out.get(tests[1] as DiscoveredTest)];
}

const base = {
  first: "await page.goto('/a)'); // a ) in a comment",
  between: "/* a ( in a comment */ const later = `(${'x'}`;",
  second: 'expect(1).toBe(1);',
};

test('a change inside one test changes its digest alone', () => {
  const [first, second] = digests(spec(base));
  expect(first).toMatch(/^sha256:[0-9a-f]{16}$/);
  const [firstAfter, secondAfter] = digests(spec({ ...base, second: 'expect(1).toBe(2);' }));
  expect(firstAfter).toBe(first);
  expect(secondAfter).not.toBe(second);
  expect(digests(spec({ ...base, first: "await page.goto('/b)');" }))[1]).toBe(second);
});

test('what follows a test before the next one, and lines added above, change nothing', () => {
  const before = digests(spec(base));
  expect(digests(spec({ ...base, between: 'const other = 2;' }))).toEqual(before);
  expect(digests(`// a new first line\n${spec(base)}`, 1)).toEqual(before);
});

test('a test of a file that was not read has no digest', () => {
  expect(sourceDigests([at(3, 3, 'first')], new Map()).size).toBe(0);
});
