#!/usr/bin/env node
// @ts-check
'use strict';
// Entry point of the `testrun` binary: the compiled CLI in dist/ (`pnpm build`), run by node alone.
const path = require('node:path');

const compiled = path.join(__dirname, '..', 'dist', 'bin.js');
try {
  require.resolve(compiled);
} catch {
  process.stderr.write(`testrun: ${compiled} is missing; build the CLI first (pnpm build)\n`);
  process.exit(1);
}
require(compiled);
