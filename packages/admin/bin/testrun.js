#!/usr/bin/env node
// @ts-check
'use strict';
// Entry point of the operator's `testrun` (a checkout's `pnpm testrun`, the server image's `testrun`):
// `testrun admin …` plus the CI commands. The compiled code is in dist/ (`pnpm build`), run by node alone.
const path = require('node:path');

const compiled = path.join(__dirname, '..', 'dist', 'bin.js');
try {
  require.resolve(compiled);
} catch {
  process.stderr.write(`testrun: ${compiled} is missing; build it first (pnpm build)\n`);
  process.exit(1);
}
require(compiled);
