// The bundle dist/testrun.cjs (build.mjs): `main` is the published `testrun` (bin/testrun.js), and the
// operator's `testrun` of @testrun/admin reuses the CI commands and the way the program runs.
export { registerClientCommands } from './client';
export { main, runProgram } from './program';
