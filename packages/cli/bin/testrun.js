#!/usr/bin/env node
// @ts-check
'use strict';
// Entry point of the `testrun` binary: the CLI bundled into dist/testrun.cjs (`pnpm build`), run by node alone.
const path = require('node:path');

const compiled = path.join(__dirname, '..', 'dist', 'testrun.cjs');
try {
  require.resolve(compiled);
} catch {
  process.stderr.write(`testrun: ${compiled} is missing; build the CLI first (pnpm build)\n`);
  process.exit(1);
}
require(compiled).main();
