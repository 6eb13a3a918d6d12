#!/usr/bin/env node
'use strict';
// Entry point of the `testrun` binary. A published build ships compiled JavaScript in dist/ and
// runs it directly; from a checkout (and from this workspace package) the TypeScript sources run
// through tsx's CommonJS hook, so there is no build step to forget.
const path = require('node:path');
const fs = require('node:fs');

const compiled = path.join(__dirname, '..', 'dist', 'bin.js');
if (fs.existsSync(compiled)) {
  require(compiled);
} else {
  require('tsx/cjs');
  require('../src/bin.ts');
}
