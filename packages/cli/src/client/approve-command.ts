import type { Command, CommanderError } from 'commander';
import type { VisualTarget } from '@testrun/client';
import type { VisualApproval, VisualApprovalLink } from '@testrun/contracts';
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

/** Flags of `testrun approve`. */
export interface ApproveFlags extends ConnectionFlags {
  run?: string;
  suiteRun?: string;
  change: string[];
  link?: boolean;
  json?: boolean;
}

/** What `testrun approve` asks for: whose changes, and which (all not yet approved when `ids` is absent). */
export type ApprovalRequest = { target: VisualTarget; ids?: string[] };

/** Checks the flags: exactly one of `--run run_…` and `--suite-run srun_…`, and `--change vis_…` ids. */
export function approvalRequest(flags: Pick<ApproveFlags, 'run' | 'suiteRun' | 'change'>): ApprovalRequest {
  const { run, suiteRun } = flags;
  if ((run === undefined) === (suiteRun === undefined))
    throw new UsageError('give exactly one of --run or --suite-run');
  let target: VisualTarget;
  if (run !== undefined) {
    if (!run.startsWith('run_')) throw new UsageError(`--run must be a run id (run_…), got "${run}"`);
    target = { runId: run };
  } else {
    const id = suiteRun ?? '';
    if (!id.startsWith('srun_')) throw new UsageError(`--suite-run must be a suite run id (srun_…), got "${id}"`);
    target = { suiteRunId: id };
  }
  const bad = flags.change.find((id) => !/^vis_\w+$/.test(id));
  if (bad !== undefined) throw new UsageError(`--change must be a visual change id (vis_…), got "${bad}"`);
  return flags.change.length === 0 ? { target } : { target, ids: [...new Set(flags.change)] };
}

/** `deployment dep_…`, or `deployments dep_…, dep_…`. */
function deploymentWords(ids: readonly string[]): string {
  return `${ids.length === 1 ? 'deployment' : 'deployments'} ${ids.join(', ')}`;
}

/**
 * The text of an approval: one line per change approved and a count; when nothing was left to
 * approve, a line that says so; and the changes named with `--change` that were not approved.
 */
export function approvalText(request: ApprovalRequest, approval: VisualApproval): string {
  const what = 'runId' in request.target ? request.target.runId : request.target.suiteRunId;
  const where = deploymentWords(approval.deployments);
  const lines = approval.approved.map((c) => `approved ${c.name} (${c.kind}) → ${where}`);
  const count = approval.approved.length;
  if (count === 0)
    lines.push(
      request.ids
        ? `Nothing to approve: none of the changes named is a change of ${what} awaiting approval.`
        : `Nothing to approve: ${what} has no visual change awaiting approval.`,
    );
  else
    lines.push(`Approved ${count} visual ${count === 1 ? 'change' : 'changes'} of ${what} as baselines of ${where}.`);
  const approved = new Set(approval.approved.map((c) => c.id));
  const left = (request.ids ?? []).filter((id) => !approved.has(id));
  if (count > 0 && left.length > 0)
    lines.push(`Not approved (already approved, or no change of ${what}): ${left.join(', ')}.`);
  return lines.join('\n');
}

/** Whether the environment is a CI job's (`CI` set, as every CI service sets it), whose logs others read. */
function inCi(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

/**
 * Checks `--link`: the link approves as the key for an hour, so it is printed on a person's
 * terminal only, never in a CI job's log; it approves the changes a person picks on the page.
 */
export function checkLinkFlags(flags: Pick<ApproveFlags, 'link' | 'change'>, env: NodeJS.ProcessEnv): void {
  if (!flags.link) return;
  if (flags.change.length > 0)
    throw new UsageError('--link and --change do not go together: pick the changes on the page');
  if (inCi(env))
    throw new UsageError(
      "--link prints a link that approves as this key: CI is set, and a CI log is read by others. Run it on your own machine, or approve with 'testrun approve' without --link",
    );
}

/** The text of an approval link: where, until when, and that it is the key's to keep. */
export function approvalLinkText(link: VisualApprovalLink): string {
  const waiting = link.pending_count === 1 ? '1 change awaits' : `${link.pending_count} changes await`;
  return [
    `Open this link to look at the changes and approve them in the browser (${waiting} approval).`,
    `It approves as this API key until ${link.expires_at}: give it to no one.`,
    link.approvalUrl,
  ].join('\n');
}

/**
 * `testrun approve --run ID | --suite-run ID [--change vis_…]… [--link]`: makes the visual changes of a run
 * (or of every run of a suite run) the baselines of their snapshots; with `--link`, prints a link
 * that approves them in the view instead. Exit 0 (also when nothing was
 * left to approve), 2 on a usage or API error (a key without the scope the change needs).
 */
async function runApprove(flags: ApproveFlags, ctx: CommandContext): Promise<number> {
  const request = approvalRequest(flags);
  checkLinkFlags(flags, ctx.env);
  const json = Boolean(flags.json);
  const { out, client } = openCommand(flags, ctx, { json });
  try {
    if (flags.link) {
      const link = await client.approvalLink(request.target);
      out.result(json ? JSON.stringify(link, null, 2) : approvalLinkText(link));
      return EXIT.passed;
    }
    const approval = await client.approveVisualChanges(request.target, request.ids);
    out.result(json ? JSON.stringify(approval, null, 2) : approvalText(request, approval));
    return EXIT.passed;
  } catch (e) {
    if (!isReportable(e)) throw e;
    return reportFailure(e, out, json);
  }
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** `testrun approve`. */
export function registerApproveCommand(program: Command, ctx: CommandContext): void {
  const approve = program
    .command('approve')
    .description(
      "Approve the visual changes of a run or a suite run as baselines; needs the 'preview' scope ('deploy' for the active version's)",
    )
    .option('--run <id>', "the run's changes (run_…)")
    .option('--suite-run <id>', 'the changes of every run of the suite run (srun_…)')
    .option('--change <id>', 'approve only this change (vis_…; repeatable)', collect, [])
    .option('--link', 'print a link, for an hour, to approve in the browser as this key (not in CI)')
    .option('--json', "print the API's JSON on stdout")
    .option('--api-url <url>', 'API origin (default: $TESTRUN_API_URL)')
    .option('--api-key <key>', 'API key (default: $TESTRUN_API_KEY)')
    .action(async (flags: ApproveFlags, command: Command) => {
      try {
        setExitCode(ctx, await runApprove(flags, ctx));
      } catch (e) {
        if (e instanceof UsageError) command.error(`error: ${e.message}`, { exitCode: 2, code: 'testrun.usage' });
        throw e;
      }
    });
  approve.showHelpAfterError('(see "testrun approve --help")');
  // As for the other commands: a usage error exits 2, never 1 ("a test failed").
  approve.exitOverride((err: CommanderError) => exitNow(ctx, err.exitCode === 0 ? 0 : 2));
}
