import type { Command, CommanderError } from 'commander';
import type { Secret } from '@testrun/contracts';
import {
  exitNow,
  isReportable,
  openCommand,
  reportFailure,
  setExitCode,
  type CommandContext,
  type ConnectionFlags,
} from './connection';
import { UsageError } from './parse-options';
import { EXIT } from './report';

/** Flags of `testrun secret set`. */
interface SecretSetFlags extends ConnectionFlags {
  valueEnv: string;
  project?: string;
  json?: boolean;
}

/** `--json` of `testrun secret set`: the secret as the API shows it (never its value) and what happened. */
export type SecretSetOutput = { secret: Secret; state: 'created' | 'updated' };

/**
 * `testrun secret set NAME --value-env VAR [--project P]`: stores a secret of the workspace (or of
 * one project) that steps reference as `{{secrets.NAME}}`, over the API (a key with the `deploy`
 * scope). The value comes from an environment variable only, never the command line, so it shows
 * in no process list or shell history; nothing prints it back. Exit 0, or 2 on an API or usage error.
 */
async function runSecretSet(name: string, flags: SecretSetFlags, ctx: CommandContext): Promise<number> {
  const value = ctx.env[flags.valueEnv];
  if (value === undefined) throw new UsageError(`the environment variable ${flags.valueEnv} is not set`);
  const json = Boolean(flags.json);
  const { out, client } = openCommand(flags, ctx, { json, secrets: [value] });
  try {
    const where = flags.project === undefined ? {} : { projectSlug: flags.project };
    const { secret, created } = await client.setSecret(name, value, where);
    const output: SecretSetOutput = { secret, state: created ? 'created' : 'updated' };
    if (json) out.result(JSON.stringify(output, null, 2));
    else
      out.result(
        `Secret ${secret.name} ${output.state} for ${secret.project_slug === null ? 'the workspace' : `project ${secret.project_slug}`}.`,
      );
    return EXIT.passed;
  } catch (e) {
    if (!isReportable(e)) throw e;
    return reportFailure(e, out, json);
  }
}

/** `testrun secret set`. */
export function registerSecretCommands(program: Command, ctx: CommandContext): void {
  const secret = program.command('secret').description('Manage the secrets steps reference as {{secrets.NAME}}');
  const set = secret
    .command('set')
    .description("Create or replace a secret of the workspace (or of --project); needs a key with the 'deploy' scope")
    .argument('<NAME>', 'the NAME of {{secrets.NAME}}')
    .requiredOption('--value-env <VAR>', 'read the value from this environment variable (never from the command line)')
    .option('--project <slug>', "the project's secret rather than the workspace's")
    .option('--json', 'print the secret as JSON on stdout (never its value)')
    .option('--api-url <url>', 'API origin (default: $TESTRUN_API_URL)')
    .option('--api-key <key>', 'API key (default: $TESTRUN_API_KEY)')
    .action(async (name: string, flags: SecretSetFlags, command: Command) => {
      try {
        setExitCode(ctx, await runSecretSet(name, flags, ctx));
      } catch (e) {
        if (e instanceof UsageError) command.error(`error: ${e.message}`, { exitCode: 2, code: 'testrun.usage' });
        throw e;
      }
    });
  for (const command of [secret, set]) {
    command.showHelpAfterError(`(see "testrun secret set --help")`);
    // As for the other commands: a usage error exits 2, never 1 ("a test failed").
    command.exitOverride((err: CommanderError) => exitNow(ctx, err.exitCode === 0 ? 0 : 2));
  }
}
