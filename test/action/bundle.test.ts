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
  // Not a diff of two minified bundles, which says nothing a person could act on: what to run.
  const fix = 'pnpm --filter @testrun/action bundle, then commit packages/action/dist';
  expect({ upToDate: rebuilt === committed, fix }).toEqual({ upToDate: true, fix });
});
