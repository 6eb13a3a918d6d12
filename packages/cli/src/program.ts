import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { registerClientCommands } from './client';
import { setExitCode, type CommandContext } from './client/connection';

/**
 * Gives `program` its `--version` (the `version` of the package.json beside `dir`'s parent, so the
 * bundle in dist/ and the sources report the same) and runs it on process.argv. An uncaught
 * failure prints one line and exits 2: 1 means "a test failed" to CI.
 */
export function runProgram(program: Command, dir: string): void {
  const manifest = JSON.parse(readFileSync(path.join(dir, '..', 'package.json'), 'utf8')) as { version?: string };
  program.version(manifest.version ?? '0.0.0', '-V, --version', 'print the version of the testrun CLI');
  program.parseAsync(process.argv).catch((e: unknown) => {
    process.stderr.write(`testrun: ${(e as Error).message}\n`);
    process.exitCode = 2;
  });
}

/**
 * `testrun admin` of the published CLI: the operator commands talk to Postgres and ship with the
 * server (docs/ADMIN.md), so this package never needs a database driver. It says where to find them
 * instead of commander's bare "unknown command".
 */
function adminPointer(ctx: CommandContext): Command {
  return new Command('admin')
    .description('operator commands: run on the server, not from this package')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      ctx.streams.stderr.write(
        'testrun: `testrun admin` talks to the database and is not part of @testrun/cli; run it where the\n' +
          "server runs (the API image's `testrun`, or `pnpm -s testrun admin …` in a Testrun checkout): see docs/ADMIN.md\n",
      );
      setExitCode(ctx, 2);
    });
}

/**
 * The published `testrun` program: `testrun run|status|cancel|rerun|projects|runs|suite-runs|secret set|deploy|deployments|activate|approve` for CI
 * pipelines, speaking the HTTP API only. Its commands, and commander's own messages, read and write
 * through `ctx`: the process's in {@link main}, a test's own streams and environment in the tests.
 */
export function cliProgram(ctx: CommandContext): Command {
  const program = new Command('testrun').description('Testrun: browser tests as a service').showHelpAfterError();
  program.configureOutput({
    writeOut: (text) => ctx.streams.stdout.write(text),
    writeErr: (text) => ctx.streams.stderr.write(text),
  });
  registerClientCommands(program, ctx);
  program.addCommand(adminPointer(ctx), { hidden: true });
  return program;
}

/** The published `testrun` command (bin/testrun.js calls it), run on the process's argv and streams. */
export function main(): void {
  runProgram(cliProgram({ env: process.env, streams: process }), __dirname);
}
