import type { Command, CommanderError } from 'commander';
import { TestrunApiError, type TestrunClient } from '@testrun/client';
import type { Deployment, DeploymentDryRun } from '@testrun/contracts';
import {
  exitNow,
  isReportable,
  openCommand,
  reportFailure,
  setExitCode,
  type CommandContext,
  type ConnectionFlags,
} from './connection';
import { BundleRefusal, bundleOf, describeBundle, ensureUploaded, type PackedBundle } from '../bundle';
import { deploymentsTable, deploymentText, warningLines } from './deployment-text';
import type { Output } from './output';
import { UsageError } from './parse-options';
import { formatProjectFileError, locateErrors, readProjectSource, type ProjectSource } from './project-source';
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

/** Reads a project file, or prints its errors as `file:line:column: message` lines (then exit 2). */
export function loadProjectFile(file: string, out: Output): ProjectSource | null {
  const read = readProjectSource(file);
  if (read.ok) return read.source;
  for (const e of read.errors) out.info(formatProjectFileError(file, e));
  out.info(`testrun: ${file} is not a valid project file; nothing was deployed`);
  return null;
}

/**
 * Reports a failed deployment: a 422 naming faults of the file by JSON pointer (`invalid_project`,
 * `limit_exceeded`) prints each at its line of the file, `file:line:column: message`; anything else
 * as every API failure. Exit 2.
 */
export function reportDeployFailure(e: unknown, source: ProjectSource, out: Output, json: boolean): number {
  if (e instanceof BundleRefusal) {
    for (const reason of e.reasons) out.info(`${source.file}: playwright: ${reason}`);
    out.info(`testrun: the Playwright bundle of ${source.file} cannot be packed; nothing was deployed`);
    return EXIT.error;
  }
  if (!isReportable(e)) throw e;
  if (isProjectFileRefusal(e)) {
    for (const located of locateErrors(source, e.errors)) out.info(formatProjectFileError(source.file, located));
    out.info(`testrun: ${source.file} is not a valid project file (${e.code}); nothing was deployed`);
    if (json)
      out.result(
        JSON.stringify(
          {
            status: 'error',
            exitCode: EXIT.error,
            error: { kind: 'api', status: e.status, code: e.code, errors: e.errors },
          },
          null,
          2,
        ),
      );
    return EXIT.error;
  }
  return reportFailure(e, out, json);
}

/** A 422 that names faults of the project file by JSON pointer (`invalid_project`, `limit_exceeded`). */
export function isProjectFileRefusal(e: unknown): e is TestrunApiError {
  return e instanceof TestrunApiError && e.status === 422 && e.errors.some((f) => f.path.startsWith('/project'));
}

/**
 * Deploys `source` (active, preview or dry run). A file with a `playwright:` section is packed into
 * its bundle first, which is uploaded unless the workspace has it (a dry run packs, says what, and
 * uploads nothing); a bundle that cannot be packed is a {@link BundleRefusal}.
 */
export async function deploySource(
  client: TestrunClient,
  source: ProjectSource,
  options: { activate: boolean; dryRun: boolean; idempotencyKey?: string; out?: Output },
): Promise<Deployment | DeploymentDryRun> {
  const bundle = await bundleOf(source.file, source.project);
  for (const warning of bundle?.warnings ?? []) options.out?.info(`${source.file}: playwright: warning: ${warning}`);
  if (bundle) {
    // A dry run uploads it too (a bundle is the workspace's, by digest, and stores no version), so
    // the service lists its tests: the dry run shows what the version would hold.
    const sent = await uploadForDeploy(client, source.slug, bundle, options.dryRun);
    options.out?.info(`Bundle: ${describeBundle(bundle)}; ${sent}.`);
  }
  const request = {
    project: source.project,
    activate: options.activate,
    ...(options.dryRun ? { dryRun: true } : {}),
    ...(bundle ? { bundle: bundle.digest } : {}),
  };
  const idempotency = options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey };
  const deployment = (await client.createDeployment(source.slug, request, idempotency)).body;
  if (options.out && !('dry_run' in deployment)) for (const line of warningLines(deployment)) options.out.info(line);
  return deployment;
}

/**
 * Uploads the bundle unless the workspace has it; says what happened. A dry run with a key that may
 * not upload (no `preview` scope) goes on without: its Playwright suites are then listed without tests.
 */
async function uploadForDeploy(client: TestrunClient, slug: string, bundle: PackedBundle, dryRun: boolean) {
  try {
    return (await ensureUploaded(client, slug, bundle)) ? 'uploaded' : 'already uploaded';
  } catch (e) {
    if (!dryRun || !(e instanceof TestrunApiError) || e.status !== 403) throw e;
    return 'not uploaded (the key may not upload bundles: the dry run lists no Playwright test)';
  }
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
