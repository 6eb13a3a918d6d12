import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parse as parseYaml } from 'yaml';
import { PLANS, type Plan } from '@testrun/contracts';
import { addMember, AdminError, applyProject, createWorkspace, removeMember, setWorkspacePlan } from './operations';
import { readSecret } from '@testrun/core/env';
import { deriveKeys } from '@testrun/core/secrets';
import { withAnnouncer } from './announce';
import { registerKeyCommands } from './key-commands';
import { registerLinkCommands } from './link-commands';
import { registerRetentionCommand } from './retention-commands';
import { registerSecretCommands } from './secret-commands';
import { runAction, type AdminContext } from './run-action';
import { registerWebhookCommands } from './webhook-commands';
import { checkProjectBaseUrl, checkProjectWebhooks, setWorkspaceTargetDeny } from './target-rules';
import { registerWorkspaceListCommand } from './workspace-list-command';

/** `--json` of `workspace create` and `workspace set-plan`. */
export type WorkspaceOutput = { id: string; name: string; plan: Plan; maxActiveRuns: number; monthlyRuns: number };
/** `--json` of `member add` and `member remove`. */
export type MemberOutput = { workspaceId: string; userId: string; email: string; member: boolean };
export type { KeyCreatedOutput, KeyListOutput, KeyScopesOutput, KeyStateOutput } from './key-commands';
function workspaceOutput(ws: WorkspaceOutput): WorkspaceOutput {
  const { id, name, plan, maxActiveRuns, monthlyRuns } = ws;
  return { id, name, plan, maxActiveRuns, monthlyRuns };
}

function parseCount(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number');
  return Number(value);
}

const planOption = () =>
  new Option('--plan <plan>', 'free, team or enterprise').choices([...PLANS]).makeOptionMandatory();

/** Reads a project file as JSON or YAML (by extension; anything else is tried as JSON, then YAML). */
function readProjectFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const why =
      e instanceof Error ? (('code' in e && typeof e.code === 'string' ? e.code : null) ?? e.message) : String(e);
    throw new AdminError(`cannot read ${file}: ${why}`);
  }
  const ext = path.extname(file).toLowerCase();
  try {
    if (ext === '.json') return JSON.parse(text);
    if (ext === '.yaml' || ext === '.yml') return parseYaml(text);
    try {
      return JSON.parse(text);
    } catch {
      return parseYaml(text);
    }
  } catch (e) {
    throw new AdminError(`${file} is not valid ${ext === '.json' ? 'JSON' : ext ? 'YAML' : 'JSON or YAML'}`, [
      { path: '', message: (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '' },
    ]);
  }
}

function limitsText(ws: { plan: string; maxActiveRuns: number; monthlyRuns: number }): string {
  return `plan ${ws.plan}, at most ${ws.maxActiveRuns} active runs and ${ws.monthlyRuns} runs a month`;
}

/**
 * The operator's `testrun` with its `admin …` commands, which read and write through `ctx`:
 * commander's own messages (usage errors, help) too.
 */
export function adminProgram(ctx: AdminContext): Command {
  const program = new Command('testrun').description('Testrun: browser tests as a service').showHelpAfterError();
  program.configureOutput({ writeOut: (text) => ctx.stdout.write(text), writeErr: (text) => ctx.stderr.write(text) });
  registerAdminCommands(program, ctx);
  return program;
}

/** `testrun admin …`: operator commands that talk to Postgres directly (see docs/ADMIN.md). */
function registerAdminCommands(program: Command, ctx: AdminContext): void {
  const admin = program
    .command('admin')
    .description('Operator commands (workspaces, members, keys, projects, secrets, webhooks); uses DATABASE_URL');
  registerSecretCommands(admin, ctx);
  registerWebhookCommands(admin, ctx);
  registerWorkspaceCommands(admin, ctx);
  registerMemberCommands(admin, ctx);
  registerKeyCommands(admin, ctx);
  registerLinkCommands(admin, ctx);
  registerProjectCommand(admin, ctx);
}

/** `admin workspace create|set-plan|set|retention|list`. */
function registerWorkspaceCommands(admin: Command, ctx: AdminContext): void {
  const workspace = admin.command('workspace').description('Create and list workspaces and change their plan');
  workspace
    .command('create')
    .description("Create a workspace on a plan (limits default to the plan's)")
    .requiredOption('--name <name>', 'workspace name')
    .addOption(planOption())
    .option('--max-active-runs <n>', "queued + running runs at once (default: the plan's)", parseCount)
    .option('--monthly-runs <n>', "runs per calendar month, UTC (default: the plan's)", parseCount)
    .option('--json', 'print JSON only')
    .action((o: { name: string; plan: Plan; maxActiveRuns?: number; monthlyRuns?: number; json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const ws = await createWorkspace(db, {
          name: o.name,
          plan: o.plan,
          maxActiveRuns: o.maxActiveRuns,
          monthlyRuns: o.monthlyRuns,
        });
        return { data: workspaceOutput(ws), text: `Created workspace ${ws.id} "${ws.name}" (${limitsText(ws)}).` };
      }),
    );

  workspace
    .command('set-plan')
    .description("Move a workspace to a plan; its limits become the plan's unless given")
    .argument('<workspaceId>')
    .addOption(planOption())
    .option('--max-active-runs <n>', 'queued + running runs at once', parseCount)
    .option('--monthly-runs <n>', 'runs per calendar month, UTC', parseCount)
    .option('--json', 'print JSON only')
    .action((workspaceId: string, o: { plan: Plan; maxActiveRuns?: number; monthlyRuns?: number; json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const limits = { plan: o.plan, maxActiveRuns: o.maxActiveRuns, monthlyRuns: o.monthlyRuns };
        const ws = await withAnnouncer(ctx.env, (announce) => setWorkspacePlan(db, workspaceId, limits, announce));
        return { data: workspaceOutput(ws), text: `Workspace ${ws.id} is now on ${limitsText(ws)}.` };
      }),
    );

  workspace
    .command('set')
    .description("Change a workspace's settings")
    .argument('<workspaceId>')
    .requiredOption(
      '--target-deny <rules>',
      'targets its runs may never reach, comma-separated as TARGET_DENY (narrows the deployment\'s policy; "" clears)',
    )
    .option('--json', 'print JSON only')
    .action((workspaceId: string, o: { targetDeny: string; json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const targetDeny = await setWorkspaceTargetDeny(db, workspaceId, o.targetDeny);
        return {
          data: { id: workspaceId, targetDeny },
          text:
            targetDeny.length > 0
              ? `Workspace ${workspaceId} denies the targets ${targetDeny.join(', ')}.`
              : `Workspace ${workspaceId} has no denied targets of its own.`,
        };
      }),
    );

  registerRetentionCommand(workspace, ctx);
  registerWorkspaceListCommand(workspace, (json, action) => runAction(ctx, json, action));
}

/** `admin member add|remove`. */
function registerMemberCommands(admin: Command, ctx: AdminContext): void {
  const member = admin.command('member').description('Add or remove members of a workspace');
  for (const verb of ['add', 'remove'] as const) {
    member
      .command(verb)
      .description(
        verb === 'add'
          ? 'Add a person (by email) to a workspace'
          : 'Remove a person from a workspace (their keys stop working)',
      )
      .requiredOption('--workspace <workspaceId>', 'workspace id')
      .requiredOption('--email <email>', "the person's email address")
      .option('--json', 'print JSON only')
      .action((o: { workspace: string; email: string; json?: boolean }) =>
        runAction(ctx, !!o.json, async (db) => {
          const m =
            verb === 'add'
              ? await addMember(db, o.workspace, o.email)
              : await withAnnouncer(ctx.env, (announce) => removeMember(db, o.workspace, o.email, announce));
          const data: MemberOutput = { ...m, member: verb === 'add' };
          return {
            data,
            text: `${m.email} ${verb === 'add' ? 'is a member of' : 'was removed from'} workspace ${m.workspaceId}.`,
          };
        }),
      );
  }
}

/** `admin project apply`. */
function registerProjectCommand(admin: Command, ctx: AdminContext): void {
  const project = admin.command('project').description('Apply project files (projects, suites, tests as code)');
  project
    .command('apply')
    .description('Create or update a project from a JSON or YAML file; tests no longer in the file are archived')
    .requiredOption('--workspace <workspaceId>', 'workspace id')
    .requiredOption('--file <file>', 'project file (.json, .yaml or .yml)')
    .option('--json', 'print JSON only')
    .action((o: { workspace: string; file: string; json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const file = readProjectFile(o.file);
        await checkProjectBaseUrl(db, o.workspace, file, ctx.env);
        await checkProjectWebhooks(db, o.workspace, file, ctx.env);
        // Sealing a new webhook endpoint's secret needs the deployment's TESTRUN_SECRET; only then is it read.
        const hasWebhooks = typeof file === 'object' && file !== null && 'webhooks' in file;
        const webhookKey = hasWebhooks ? deriveKeys(readSecret(ctx.env)).headers : undefined;
        const applied = await applyProject(db, o.workspace, file, { webhookKey });
        const tests = applied.suites.reduce((n, s) => n + s.tests.length, 0);
        const secrets = (applied.webhooks ?? []).flatMap((w) =>
          w.secret ? [`New webhook endpoint ${w.id} for ${w.url}; its signing secret (shown once): ${w.secret}`] : [],
        );
        return {
          data: applied,
          text: [
            `Applied project "${applied.slug}" (${applied.projectId}): ${applied.suites.length} suites, ${tests} tests${applied.webhooks ? `, ${applied.webhooks.length} webhook endpoints` : ''}.`,
            ...secrets,
          ].join('\n'),
        };
      }),
    );
}
