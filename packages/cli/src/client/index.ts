import { Option, type Command, type CommanderError } from 'commander';
import { EVIDENCE_MODES } from '@testrun/contracts';
import { UsageError } from './parse-options';
import { registerApproveCommand } from './approve-command';
import { exitNow, setExitCode, type CommandContext } from './connection';
import { registerDeployCommands } from './deploy-commands';
import { registerListCommands } from './list-commands';
import { runCancelCommand, runRerunCommand, type CancelFlags, type RerunFlags } from './lifecycle-commands';
import { runRunCommand, type RunFlags } from './run-command';
import { registerSecretCommands } from './secret-commands';
import { runStatusCommand, type StatusFlags } from './status-command';

const collect = (value: string, previous: string[]) => [...previous, value];

/**
 * `testrun run`, `status`, `cancel` and `rerun`: the CI side of the CLI, speaking the HTTP API. Exit codes
 * are the contract of these commands with CI systems: 0 passed, 1 failed, 2 anything else
 * (error, skipped only, wait budget exceeded, usage or API error), and for `status` 3 when the run
 * is not finished.
 */
export function registerClientCommands(
  program: Command,
  ctx: CommandContext = { env: process.env, streams: process },
): void {
  const commands = [registerRun(program, ctx), ...registerStatusAndCancel(program, ctx), registerRerun(program, ctx)];

  registerListCommands(program, ctx);
  registerSecretCommands(program, ctx);
  registerDeployCommands(program, ctx);
  registerApproveCommand(program, ctx);

  for (const command of commands) {
    command.showHelpAfterError(`(see "testrun ${command.name()} --help")`);
    // Commander exits 1 on a bad flag; 1 means "a test failed" to CI, so usage errors exit 2.
    command.exitOverride((err: CommanderError) => {
      exitNow(ctx, err.exitCode === 0 ? 0 : 2);
    });
  }
}

function registerRun(program: Command, ctx: CommandContext): Command {
  const run = program
    .command('run')
    .description('Enqueue a test, a suite or a whole project and wait for the verdict')
    .addOption(new Option('--test <id>', 'run one test (its id, tst_…)'))
    .addOption(new Option('--project <slug>', 'run every suite of a project'))
    .addOption(
      new Option('--file <file>', "deploy this project file as a preview (needs the 'preview' scope) and run it"),
    )
    .addOption(new Option('--suite <slug>', 'with --project or --file: run only this suite (one suite run)'))
    .option('--base-url <url>', 'target URL for this run only (e.g. a preview deployment)')
    .option(
      '--header <"Name: value">',
      'header sent to the target site (repeatable); prefer --header-env: a command line is logged',
      collect,
      [],
    )
    .option('--header-env <Name=ENV_VAR>', "header whose value is the environment variable's (repeatable)", collect, [])
    .option('--header-file <file>', 'headers from a file: "Name: value" lines or a JSON object (as $TESTRUN_HEADERS)')
    .option('--var <NAME=value>', 'plain variable for {{vars.NAME}} (repeatable)', collect, [])
    .option(
      '--secret-var-env <NAME=ENV_VAR>',
      "secret variable for {{secrets.NAME}} from the environment variable's value (repeatable)",
      collect,
      [],
    )
    .addOption(new Option('--trace <mode>', 'keep the Playwright trace: on, on-failure or off').choices(EVIDENCE_MODES))
    .addOption(new Option('--video <mode>', 'keep a video: on, on-failure or off').choices(EVIDENCE_MODES))
    .addOption(
      new Option('--screenshots <mode>', 'keep a screenshot after each step: on, on-failure or off').choices(
        EVIDENCE_MODES,
      ),
    )
    .option(
      '--retries <n>',
      "attempt each failed or error run again up to n times, 0 to 3 (default: the test's retries)",
    )
    .option(
      '--workers <n>',
      "Playwright workers of the suite run, as playwright test --workers (default: the config's)",
    )
    .option(
      '--idempotency-key <key>',
      'Idempotency-Key of the enqueue (default: derived from the CI job, else random)',
    );
  return followOptions(run, { ids: 'ids', running: 'the enqueued runs' }).action(
    async (flags: RunFlags, command: Command) => {
      setExitCode(ctx, await usageErrors(command, () => runRunCommand(flags, ctx)));
    },
  );
}

/** `status ID` and `cancel ID`: one run or suite run, by its id. */
function registerStatusAndCancel(program: Command, ctx: CommandContext): Command[] {
  const byId = [
    {
      name: 'status',
      description: 'Show the state of a run (run_…) or a suite run (srun_…)',
      json: 'print the API object as JSON (with exitCode) on stdout',
      run: runStatusCommand,
    },
    {
      name: 'cancel',
      description: 'Cancel a run (run_…) or every run of a suite run (srun_…)',
      json: 'print the run or suite run as the API gives it after the cancel',
      run: runCancelCommand,
    },
  ] as const;
  return byId.map(({ name, description, json, run }) =>
    connectionOptions(
      program.command(name).description(description).argument('<id>', 'run id or suite run id').option('--json', json),
    ).action(async (id: string, flags: StatusFlags & CancelFlags, command: Command) => {
      setExitCode(ctx, await usageErrors(command, () => run(id, flags, ctx)));
    }),
  );
}

function registerRerun(program: Command, ctx: CommandContext): Command {
  const rerun = program
    .command('rerun')
    .description('Run again the failed and error tests (--failed) or all tests (--all) of a suite run, and wait')
    .argument('<srun>', 'suite run id (srun_…)')
    .option('--failed', 'rerun the tests that ended failed or error')
    .option('--all', 'rerun every test')
    .option('--header-env <Name=ENV_VAR>', 'header to send instead of the original’s (repeatable)', collect, [])
    .option('--header-file <file>', 'headers from a file, instead of the original’s (as $TESTRUN_HEADERS)')
    .option('--var <NAME=value>', 'plain variable, instead of the original’s (repeatable)', collect, [])
    .option('--secret-var-env <NAME=ENV_VAR>', 'secret variable, instead of the original’s (repeatable)', collect, [])
    .option('--idempotency-key <key>', 'Idempotency-Key of the rerun (default random)');
  return followOptions(rerun, { ids: 'id', running: 'the rerun' }).action(
    async (srun: string, flags: Omit<RerunFlags, 'header'>, command: Command) => {
      setExitCode(ctx, await usageErrors(command, () => runRerunCommand(srun, { ...flags, header: [] }, ctx)));
    },
  );
}

/** The options of `run` and `rerun` that say how to wait and report; `left` names what they enqueue. */
function followOptions(command: Command, left: { ids: string; running: string }): Command {
  return connectionOptions(
    command
      .option('--timeout <duration>', 'wait budget: 15m, 90s, 1h or milliseconds', '15m')
      .option('--poll-interval <duration>', 'delay between two polls', '3s')
      .option('--junit <file>', 'write a JUnit XML report to this file')
      .option('--json', 'print one JSON document with the result on stdout (and nothing else)')
      .option('--no-wait', `enqueue, print the ${left.ids} and exit 0 without waiting`)
      .option('--no-cancel-on-exit', `on SIGINT/SIGTERM (a cancelled CI job), leave ${left.running} running`),
  );
}

/** `--api-url` and `--api-key`, the last options of every command. */
function connectionOptions(command: Command): Command {
  return command
    .option('--api-url <url>', 'API origin (default: $TESTRUN_API_URL)')
    .option('--api-key <key>', 'API key (default: $TESTRUN_API_KEY)');
}

async function usageErrors(command: Command, action: () => Promise<number>): Promise<number> {
  try {
    return await action();
  } catch (e) {
    if (e instanceof UsageError) command.error(`error: ${e.message}`, { exitCode: 2, code: 'testrun.usage' });
    throw e;
  }
}
