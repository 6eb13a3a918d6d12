import type { Command, CommanderError } from 'commander';
import type { RunListFilters } from '@testrun/client';
import { formatDuration, type ProjectList, type RunList, type SuiteRunList } from '@testrun/contracts';
import {
  exitNow,
  isReportable,
  openCommand,
  reportFailure,
  setExitCode,
  type CommandContext,
  type ConnectionFlags,
} from './connection';
import { table } from './output';
import { EXIT, statusText } from './report';

/** Flags of `testrun runs` and `testrun suite-runs`: the API's listing filters, by their CLI names. */
interface ListFlags extends ConnectionFlags {
  project?: string;
  suite?: string;
  test?: string;
  suiteRun?: string;
  status?: string;
  createdAfter?: string;
  createdBefore?: string;
  limit?: string;
  cursor?: string;
  json?: boolean;
}

const instant = (iso: string | null) => (iso ? `${iso.slice(0, 19).replace('T', ' ')}Z` : '-');

function projectsTable({ projects }: ProjectList): string {
  if (projects.length === 0) return 'No projects in this workspace.';
  const rows = projects.flatMap((p) => {
    const tests = p.suites.flatMap((s) =>
      s.tests.map((t) => [p.slug, s.slug, t.id, t.key, t.enabled ? 'yes' : 'no', t.name]),
    );
    return tests.length > 0 ? tests : [[p.slug, '-', '-', '-', '-', '(no tests)']];
  });
  return table(['PROJECT', 'SUITE', 'TEST ID', 'KEY', 'ENABLED', 'NAME'], rows);
}

function runsTable({ runs }: RunList): string {
  if (runs.length === 0) return 'No runs.';
  const rows = runs.map((r) => [
    r.id,
    statusText(r),
    instant(r.created_at),
    r.duration_ms === null ? '-' : formatDuration(r.duration_ms),
    r.test_name,
  ]);
  return table(['RUN ID', 'STATUS', 'CREATED', 'DURATION', 'TEST'], rows);
}

function suiteRunsTable({ suite_runs: suiteRuns }: SuiteRunList): string {
  if (suiteRuns.length === 0) return 'No suite runs.';
  const rows = suiteRuns.map((s) => [
    s.id,
    s.status,
    instant(s.created_at),
    `${s.project_slug}/${s.suite_slug}`,
    `${s.passed_count}/${s.failed_count}/${s.error_count}/${s.skipped_count} of ${s.total_count}`,
    String(s.flaky_count),
  ]);
  // FLAKY: of the passed, those that passed only on a retry.
  return table(['SUITE RUN ID', 'STATUS', 'CREATED', 'SUITE', 'PASSED/FAILED/ERROR/SKIPPED', 'FLAKY'], rows);
}

/** The filters as the API names them; the API checks them and names what is wrong (400 invalid_query). */
function filtersOf(flags: ListFlags): RunListFilters {
  return {
    projectSlug: flags.project,
    suiteSlug: flags.suite,
    testId: flags.test,
    suiteRunId: flags.suiteRun,
    status: flags.status,
    createdAfter: flags.createdAfter,
    createdBefore: flags.createdBefore,
    limit: flags.limit === undefined ? undefined : Number(flags.limit),
    cursor: flags.cursor,
  };
}

/**
 * Runs one listing: the API's JSON with --json, else the table and, when there is more, the
 * `--cursor` of the next page. Exit 0, or 2 with the API's reason.
 */
async function list<T>(
  flags: ConnectionFlags & { json?: boolean },
  ctx: CommandContext,
  read: (client: ReturnType<typeof openCommand>['client']) => Promise<T>,
  render: (page: T) => string,
  next: (page: T) => string | null = () => null,
): Promise<number> {
  const json = Boolean(flags.json);
  const { out, client } = openCommand(flags, ctx, { json });
  try {
    const page = await read(client);
    if (json) {
      out.result(JSON.stringify(page, null, 2));
    } else {
      const cursor = next(page);
      out.result(cursor ? `${render(page)}\n\nNext page: --cursor ${cursor}` : render(page));
    }
    return EXIT.passed;
  } catch (e) {
    if (!isReportable(e)) throw e;
    return reportFailure(e, out, json);
  }
}

/** {@link list} of one page of runs or suite runs, which names the next page's cursor. */
function listPage<T extends { next_cursor: string | null }>(
  flags: ListFlags,
  ctx: CommandContext,
  read: (client: ReturnType<typeof openCommand>['client']) => Promise<T>,
  render: (page: T) => string,
): Promise<number> {
  return list(flags, ctx, read, render, (page) => page.next_cursor);
}

function connectionOptions(command: Command): Command {
  return command
    .option('--json', "print the API's JSON on stdout")
    .option('--api-url <url>', 'API origin (default: $TESTRUN_API_URL)')
    .option('--api-key <key>', 'API key (default: $TESTRUN_API_KEY)');
}

function listingOptions(command: Command): Command {
  return command
    .option('--project <slug>', 'only this project')
    .option('--suite <slug>', 'with --project: only this suite')
    .option('--status <statuses>', 'only these statuses, comma-separated (e.g. failed,error)')
    .option('--created-after <instant>', 'only what was created at or after this RFC 3339 instant')
    .option('--created-before <instant>', 'only what was created before this RFC 3339 instant')
    .option('--limit <n>', 'page size, 1 to 100 (default 20)')
    .option('--cursor <cursor>', 'the next page: the cursor the previous page printed, with the same filters');
}

/**
 * `testrun projects`, `testrun runs` and `testrun suite-runs`: what a workspace can run (to find a
 * test id) and pages of its runs and suite runs, newest first, filtered as GET /api/v1/runs and
 * /api/v1/suite-runs are. Exit 0, or 2 on an API or usage error.
 */
export function registerListCommands(program: Command, ctx: CommandContext): void {
  const projects = connectionOptions(
    program.command('projects').description("List the workspace's projects, suites and tests (ids, keys, names)"),
  ).action(async (flags: ConnectionFlags & { json?: boolean }) => {
    setExitCode(ctx, await list(flags, ctx, (client) => client.listProjects(), projectsTable));
  });

  const runs = connectionOptions(
    listingOptions(program.command('runs').description("List the workspace's runs, newest first"))
      .option('--test <id>', 'only runs of this test (tst_…)')
      .option('--suite-run <id>', 'only the runs of this suite run (srun_…)'),
  ).action(async (flags: ListFlags) => {
    setExitCode(ctx, await listPage(flags, ctx, (client) => client.listRuns(filtersOf(flags)), runsTable));
  });

  const suiteRuns = connectionOptions(
    listingOptions(program.command('suite-runs').description("List the workspace's suite runs, newest first")),
  ).action(async (flags: ListFlags) => {
    setExitCode(ctx, await listPage(flags, ctx, (client) => client.listSuiteRuns(filtersOf(flags)), suiteRunsTable));
  });

  for (const command of [projects, runs, suiteRuns]) {
    command.showHelpAfterError(`(see "testrun ${command.name()} --help")`);
    // As for `run` and `status`: a usage error exits 2, never 1 ("a test failed").
    command.exitOverride((err: CommanderError) => exitNow(ctx, err.exitCode === 0 ? 0 : 2));
  }
}
