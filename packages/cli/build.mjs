// Bundles the CLI with esbuild into one file that needs nothing but node, dist/testrun.cjs: the only
// code the published package ships (bin/testrun.js calls its `main`), also what @testrun/admin imports.
// The workspace packages are bundled from their TypeScript sources (the @testrun/source condition), and
// commander with them, so installing the package pulls in no dependency at all.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/index.ts'],
  outfile: 'dist/testrun.cjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  conditions: ['@testrun/source'],
  legalComments: 'none',
  logLevel: 'warning',
});
