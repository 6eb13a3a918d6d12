// The operator's `testrun`: `testrun admin …` talks to Postgres (DATABASE_URL), and `testrun run|status`
// are the CI commands of @testrun/cli, so one binary on a server or in a checkout does both. The
// published @testrun/cli carries only the CI commands and never needs the database.
import { Command } from 'commander';
import { registerClientCommands, runProgram } from '@testrun/cli';
import { registerAdminCommands } from '.';

const program = new Command('testrun').description('Testrun: browser tests as a service').showHelpAfterError();
registerAdminCommands(program);
registerClientCommands(program);
runProgram(program, __dirname);
