import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROBLEM_CODES, RUN_ERROR_CODES, RUN_FAILURE_CODES, SKIP_REASONS } from '@testrun/contracts';
import { REPO_ROOT } from '../support/processes';

/**
 * The lists of codes the docs spell out (run error and failure codes, skip reasons, problem codes)
 * are held to the enums of packages/contracts, so a code added there fails here until every page
 * that lists it says so, and a page never lists a code that does not exist.
 */

const doc = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');

/** The text of `file` from the first line containing `start` up to (not including) `end`. */
function slice(file: string, start: string, end: string | RegExp): string {
  const text = doc(file);
  const from = text.indexOf(start);
  if (from < 0) throw new Error(`${file}: "${start}" not found; update test/docs/code-lists.test.ts`);
  const rest = text.slice(from + start.length);
  const to = typeof end === 'string' ? rest.indexOf(end) : rest.search(end);
  if (to < 0) throw new Error(`${file}: the end of "${start}" (${String(end)}) not found`);
  return rest.slice(0, to);
}

/** Every `snake_case` word in backticks. */
function codesIn(text: string): string[] {
  return [...text.matchAll(/`([a-z][a-z0-9_]*)`/g)].map((m) => m[1] ?? '');
}

/** The body rows of the first markdown table at or after the line containing `heading`, cells unquoted. */
function tableAfter(file: string, heading: string): string[][] {
  const text = doc(file);
  const from = text.indexOf(heading);
  if (from < 0) throw new Error(`${file}: "${heading}" not found; update test/docs/code-lists.test.ts`);
  const lines = text.slice(text.lastIndexOf('\n', from) + 1).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rest = lines.slice(first);
  const table = rest.slice(
    0,
    rest.findIndex((l) => !l.startsWith('|')),
  );
  return table
    .filter((l) => !/^\|[-| :]+\|$/.test(l))
    .slice(1)
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim().replace(/^`|`$/g, '')),
    );
}

/** What a page misses and what it lists beyond `expected`, named for the failure message. */
function drift(where: string, listed: readonly string[], expected: readonly string[]) {
  const unique = [...new Set(listed)];
  return {
    where,
    missing: expected.filter((c) => !unique.includes(c)),
    extra: unique.filter((c) => !expected.includes(c)),
  };
}
const none = (where: string) => ({ where, missing: [], extra: [] });

describe('docs list every code of packages/contracts, and no other', () => {
  it('WORKER.md, the outcome table: RUN_ERROR_CODES on error rows, RUN_FAILURE_CODES on failed rows', () => {
    const rows = tableAfter('docs/WORKER.md', '### Outcome classification');
    const codes = (status: string) => rows.filter((r) => r[0] === status).map((r) => r[1] ?? '');
    expect(drift('docs/WORKER.md outcome table, error', codes('error'), RUN_ERROR_CODES)).toEqual(
      none('docs/WORKER.md outcome table, error'),
    );
    expect(drift('docs/WORKER.md outcome table, failed', codes('failed'), RUN_FAILURE_CODES)).toEqual(
      none('docs/WORKER.md outcome table, failed'),
    );
  });

  it('ARCHITECTURE.md: the skip reasons, the run error codes and the failure codes', () => {
    // Each bullet says what it lists in parentheses first: the codes follow its "):".
    const skip = codesIn(slice('docs/ARCHITECTURE.md', '- **Skip reasons**', '\n- **').split('):')[1] ?? '');
    expect(drift('docs/ARCHITECTURE.md skip reasons', skip, SKIP_REASONS)).toEqual(
      none('docs/ARCHITECTURE.md skip reasons'),
    );
    const errors = slice('docs/ARCHITECTURE.md', '- **Run error codes**', '\n- **');
    const [errorPart = '', failurePart = ''] = (errors.split('):')[1] ?? '').split('A `failed` run');
    expect(drift('docs/ARCHITECTURE.md run error codes', codesIn(errorPart), RUN_ERROR_CODES)).toEqual(
      none('docs/ARCHITECTURE.md run error codes'),
    );
    const failures = codesIn(failurePart.split('`RUN_FAILURE_CODES`:')[1]?.split(')')[0] ?? '');
    expect(drift('docs/ARCHITECTURE.md failure codes', failures, RUN_FAILURE_CODES)).toEqual(
      none('docs/ARCHITECTURE.md failure codes'),
    );
  });

  it('API.md, GET run: the error codes, the failure codes and the skip reasons', () => {
    const errors = slice('docs/API.md', 'with `code` one of', '; and `step`');
    expect(drift('docs/API.md error.code', codesIn(errors), RUN_ERROR_CODES)).toEqual(none('docs/API.md error.code'));
    const failures = codesIn(slice('docs/API.md', "A `failed` run's failure code", 'is shown'));
    expect(drift('docs/API.md failure codes', failures, RUN_FAILURE_CODES)).toEqual(none('docs/API.md failure codes'));
    const skip = codesIn(slice('docs/API.md', '- `skip_reason` is null unless `status` is `skipped`', '\n- '));
    expect(drift('docs/API.md skip_reason', skip, SKIP_REASONS)).toEqual(none('docs/API.md skip_reason'));
  });

  it('API.md, the table of problem codes: PROBLEMS', () => {
    const codes = tableAfter('docs/API.md', '| Code | Status | When |').map((r) => r[0] ?? '');
    expect(drift('docs/API.md problem table', codes, PROBLEM_CODES)).toEqual(none('docs/API.md problem table'));
  });
});

describe('the parsing finds what it reads', () => {
  it('reports a missing and an extra code by name', () => {
    expect(drift('a page', ['timeout', 'made_up'], ['timeout', 'worker_lost'])).toEqual({
      where: 'a page',
      missing: ['worker_lost'],
      extra: ['made_up'],
    });
  });
});
