// The `testrun` command: `testrun admin …` for operators (talks to Postgres), `testrun run|status`
// for CI pipelines (talks to the HTTP API).
import { Command } from 'commander';
import { registerAdminCommands } from './admin';
import { registerClientCommands } from './client';

const program = new Command('testrun').description('Testrun: browser tests as a service').showHelpAfterError();
registerAdminCommands(program);
registerClientCommands(program);

program.parseAsync(process.argv).catch((e: unknown) => {
  process.stderr.write(`testrun: ${(e as Error).message}\n`);
  process.exitCode = 2;
});
