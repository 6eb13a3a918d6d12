// Bundles the client for publishing, so that it installs alone and needs nothing but node:
// - dist/index.cjs and dist/index.mjs (esbuild): the client with the parts of @testrun/contracts it
//   uses, taken from their TypeScript sources (the @testrun/source condition);
// - dist/index.d.cts and dist/index.d.mts (rollup-plugin-dts): one declaration file with the
//   contracts' types inlined, built from tsc's declarations in dist/types.
// esbuild has no declaration output and tsc cannot inline another package's types; the two together
// do what a library bundler does, without one more tool that needs a newer node than ours.
import { copyFileSync } from 'node:fs';
import { build } from 'esbuild';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';

const common = {
  entryPoints: ['src/index.ts'],
  bundle: true,
  platform: 'node',
  target: 'node20',
  conditions: ['@testrun/source'],
  legalComments: 'none',
  logLevel: 'warning',
};
await build({ ...common, format: 'cjs', outfile: 'dist/index.cjs' });
await build({ ...common, format: 'esm', outfile: 'dist/index.mjs' });

const types = await rollup({
  input: 'dist/types/index.d.ts',
  external: ['ajv', 'ajv-formats'],
  plugins: [dts({ respectExternal: true, compilerOptions: { customConditions: [], moduleResolution: 100 } })],
  onwarn: (warning) => {
    throw new Error(`rollup-plugin-dts: ${warning.message}`);
  },
});
await types.write({ file: 'dist/index.d.cts', format: 'es' });
await types.close();
copyFileSync('dist/index.d.cts', 'dist/index.d.mts');
