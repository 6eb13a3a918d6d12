// The operator's `testrun`: `testrun admin …` talks to Postgres (DATABASE_URL), and `testrun run|status`
// are the CI commands of @testrun/cli, so one binary on a server or in a checkout does both. The
// published @testrun/cli carries only the CI commands and never needs the database.
import { registerClientCommands, runProgram } from '@testrun/cli';
import { adminProgram } from '.';
import { processContext } from './run-action';

const program = adminProgram(processContext());
registerClientCommands(program);
runProgram(program, __dirname);
