import type { Command, CommanderError } from 'commander';
import type { TestrunClient } from '@testrun/client';
import {
  exitNow,
  isReportable,
  openCommand,
  reportFailure,
  setExitCode,
  type CommandContext,
  type ConnectionFlags,
} from './connection';
import { deploySource, loadProjectFile, reportDeployFailure } from './deploy-source';
import { deploymentsTable, deploymentText } from './deployment-text';
import { UsageError } from './parse-options';
import { EXIT } from './report';

/** Flags of `testrun deploy`. */
interface DeployFlags extends ConnectionFlags {
  file: string;
  preview?: boolean;
  dryRun?: boolean;
  idempotencyKey?: string;
  json?: boolean;
}

/** Flags of `testrun deployments` and `testrun activate`. */
interface ProjectFlags extends ConnectionFlags {
  project: string;
  version?: string;
  limit?: string;
  cursor?: string;
  json?: boolean;
}

/**
 * `testrun deploy --file F [--preview] [--dry-run]`: the project file as the project's next
 * version. Prints the version and its changes (each warning on stderr); exit 0. An invalid file
 * is printed at its lines (`file:line:column: message`); exit 2, as for any API or usage error.
 */
async function runDeploy(flags: DeployFlags, ctx: CommandContext): Promise<number> {
  const json = Boolean(flags.json);
  const { out, client } = openCommand(flags, ctx, { json });
  const source = loadProjectFile(flags.file, out);
  if (source === null) return EXIT.error;
  try {
    const deployment = await deploySource(client, source, {
      activate: !flags.preview,
      dryRun: Boolean(flags.dryRun),
      out,
      ...(flags.idempotencyKey === undefined ? {} : { idempotencyKey: flags.idempotencyKey }),
    });
    out.result(json ? JSON.stringify(deployment, null, 2) : deploymentText(deployment));
    return EXIT.passed;
  } catch (e) {
    return reportDeployFailure(e, source, out, json);
  }
}

function parseLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,3}$/.test(value)) throw new UsageError('--limit must be a number from 1 to 100');
  return Number(value);
}

/** `testrun deployments --project P`: one page of the project's versions, newest first. */
async function runDeployments(flags: ProjectFlags, ctx: CommandContext): Promise<number> {
  const limit = parseLimit(flags.limit);
  const json = Boolean(flags.json);
  const { out, client } = openCommand(flags, ctx, { json });
  try {
    const page = await client.listDeployments(flags.project, {
      ...(limit === undefined ? {} : { limit }),
      ...(flags.cursor === undefined ? {} : { cursor: flags.cursor }),
    });
    if (json) out.result(JSON.stringify(page, null, 2));
    else {
      const table = deploymentsTable(page);
      out.result(page.next_cursor ? `${table}\n\nNext page: --cursor ${page.next_cursor}` : table);
    }
    return EXIT.passed;
  } catch (e) {
    if (!isReportable(e)) throw e;
    return reportFailure(e, out, json);
  }
}

/** The deployment of `version`, found page by page in the listing (newest first), or null. */
async function findVersion(client: TestrunClient, project: string, version: number): Promise<string | null> {
  let cursor: string | undefined;
  do {
    const page = await client.listDeployments(project, { limit: 100, ...(cursor === undefined ? {} : { cursor }) });
    const found = page.deployments.find((d) => d.version === version);
    if (found) return found.id;
    // Newest first: once past the version, no later page has it.
    if (page.deployments.some((d) => d.version < version)) return null;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return null;
}

/** `testrun activate --project P --version N`: makes version N the active one (a rollback or a promotion). */
async function runActivate(flags: ProjectFlags, ctx: CommandContext): Promise<number> {
  const version = flags.version ?? '';
  if (!/^[1-9][0-9]{0,8}$/.test(version)) throw new UsageError('--version must be a version number (1, 2, …)');
  const json = Boolean(flags.json);
  const { out, client } = openCommand(flags, ctx, { json });
  try {
    const id = await findVersion(client, flags.project, Number(version));
    if (id === null) {
      out.info(`testrun: project ${flags.project} has no version ${version}`);
      return EXIT.error;
    }
    const deployment = await client.activateDeployment(flags.project, id);
    out.result(
      json
        ? JSON.stringify(deployment, null, 2)
        : `Activated ${deployment.project_slug} version ${deployment.version} (${deployment.id}).`,
    );
    return EXIT.passed;
  } catch (e) {
    if (!isReportable(e)) throw e;
    return reportFailure(e, out, json);
  }
}

function connection(command: Command): Command {
  return command
    .option('--json', "print the API's JSON on stdout")
    .option('--api-url <url>', 'API origin (default: $TESTRUN_API_URL)')
    .option('--api-key <key>', 'API key (default: $TESTRUN_API_KEY)');
}

/** `testrun deploy`, `testrun deployments` and `testrun activate`: a team's versions of its project. */
export function registerDeployCommands(program: Command, ctx: CommandContext): void {
  const usage = (run: () => Promise<number>, command: Command) =>
    run().then(
      (code) => setExitCode(ctx, code),
      (e: unknown) => {
        if (e instanceof UsageError) command.error(`error: ${e.message}`, { exitCode: 2, code: 'testrun.usage' });
        throw e;
      },
    );
  const deploy = connection(
    program
      .command('deploy')
      .description(
        "Deploy a project file as the project's next version (active; --preview: not active); prints the changes",
      )
      .requiredOption('--file <file>', 'the project file (YAML)')
      .option(
        '--preview',
        "store it as a preview: it runs only when named (testrun run --file); needs the 'preview' scope",
      )
      .option('--dry-run', 'check the file and print the changes; store nothing')
      .option('--idempotency-key <key>', 'Idempotency-Key of the deployment (default random)'),
  ).action((flags: DeployFlags, command: Command) => usage(() => runDeploy(flags, ctx), command));

  const deployments = connection(
    program
      .command('deployments')
      .description("List a project's deployed versions, newest first")
      .requiredOption('--project <slug>', 'the project')
      .option('--limit <n>', 'page size, 1 to 100 (default 20)')
      .option('--cursor <cursor>', 'the next page: the cursor the previous page printed'),
  ).action((flags: ProjectFlags, command: Command) => usage(() => runDeployments(flags, ctx), command));

  const activate = connection(
    program
      .command('activate')
      .description("Make a deployed version the active one (a rollback or a promotion); needs the 'deploy' scope")
      .requiredOption('--project <slug>', 'the project')
      .requiredOption('--version <n>', 'the version to activate'),
  ).action((flags: ProjectFlags, command: Command) => usage(() => runActivate(flags, ctx), command));

  for (const command of [deploy, deployments, activate]) {
    command.showHelpAfterError(`(see "testrun ${command.name()} --help")`);
    // As for the other commands: a usage error exits 2, never 1 ("a test failed").
    command.exitOverride((err: CommanderError) => exitNow(ctx, err.exitCode === 0 ? 0 : 2));
  }
}
