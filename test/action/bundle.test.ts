/**
 * The committed bundle (packages/action/dist/index.js, what action.yml runs) is what its sources
 * build to: `pnpm --filter @testrun/action bundle` after a change, and commit dist/ with it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../support/processes';

it('packages/action/dist/index.js is up to date with its sources', () => {
  const outfile = path.join(mkdtempSync(path.join(tmpdir(), 'testrun-bundle-')), 'index.js');
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'packages/action/bundle.mjs'), '--outfile', outfile]);
  const committed = readFileSync(path.join(REPO_ROOT, 'packages/action/dist/index.js'), 'utf8');
  const rebuilt = readFileSync(outfile, 'utf8');
  // A plain equality: a diff of two minified bundles says nothing a person could act on.
  expect(rebuilt === committed).toBe(true);
});
