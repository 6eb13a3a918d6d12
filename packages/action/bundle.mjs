// Builds dist/index.js, the one file action.yml runs: the action's sources with @actions/core, the
// client and the contracts bundled in, so the runner starts it with plain `node` and no install.
// `node bundle.mjs --outfile FILE` writes elsewhere: the test that checks the committed bundle is
// current compares such a build with dist/index.js.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const here = path.dirname(new URL(import.meta.url).pathname);
const { values } = parseArgs({ options: { outfile: { type: 'string' } } });

await build({
  entryPoints: [path.join(here, 'src/index.ts')],
  outfile: values.outfile ?? path.join(here, 'dist/index.js'),
  // Workspace packages from their TypeScript sources: the bundle never depends on a stale dist/.
  conditions: ['@testrun/source'],
  // Paths in the bundle's comments are relative to the repository, the same on every machine.
  absWorkingDir: path.resolve(here, '../..'),
  bundle: true,
  platform: 'node',
  // Runs on GitHub's node24; node20 here, where the tests run it.
  target: 'node20',
  format: 'cjs',
  minify: true,
  legalComments: 'eof',
  logLevel: 'warning',
});
