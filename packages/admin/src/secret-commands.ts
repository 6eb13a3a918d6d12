import type { Command } from 'commander';
import { AdminError, deleteSecretVariable, listSecretVariables, setSecretVariable } from './operations';
import { readSecret } from '@testrun/core/env';
import { deriveKeys } from '@testrun/core/secrets';
import type { SecretListing } from './operations';
import { runAction, type AdminContext } from './run-action';

/** `--json` of `secret set` and `secret delete`: the name and where it lives, never the value. */
export type SecretChangedOutput = { name: string; workspaceId: string; projectSlug: string | null; state: string };
/** `--json` of `secret list`. */
export type SecretListOutput = { secrets: SecretListing[] };

type ScopeOptions = { workspace: string; project?: string; json?: boolean };

/** Reads the value from the named environment variable, else from stdin (a trailing newline is dropped). */
async function readValue(ctx: AdminContext, valueEnv: string | undefined): Promise<string> {
  if (valueEnv !== undefined) {
    const value = ctx.env[valueEnv];
    if (value === undefined) throw new AdminError(`the environment variable ${valueEnv} is not set`);
    return value;
  }
  const stdin = ctx.stdin();
  if (stdin.isTTY) throw new AdminError('give the value on stdin (or name a variable with --value-env)');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function where(o: ScopeOptions): string {
  return o.project ? `project ${o.project} of workspace ${o.workspace}` : `workspace ${o.workspace}`;
}

/**
 * `testrun admin secret set|list|delete`: secret variables that steps reference as
 * `{{secrets.NAME}}`. A value is read from stdin or an environment variable, never from the
 * command line, and no command prints it back. Sealing needs the deployment's TESTRUN_SECRET.
 */
export function registerSecretCommands(admin: Command, ctx: AdminContext): void {
  const secret = admin.command('secret').description('Set, list and delete secret variables ({{secrets.NAME}})');
  secret
    .command('set')
    .description('Store a secret (value from stdin or --value-env; never printed back)')
    .requiredOption('--workspace <workspaceId>', 'workspace id')
    .option('--project <slug>', 'only for this project (wins over the workspace value)')
    .requiredOption('--name <name>', 'the NAME of {{secrets.NAME}}')
    .option('--value-env <VAR>', 'read the value from this environment variable instead of stdin')
    .option('--json', 'print JSON only')
    .action((o: ScopeOptions & { name: string; valueEnv?: string }) =>
      runAction(ctx, !!o.json, async (db) => {
        const value = await readValue(ctx, o.valueEnv);
        const key = deriveKeys(readSecret(ctx.env)).headers;
        const { created } = await setSecretVariable(
          db,
          key,
          { workspaceId: o.workspace, projectSlug: o.project },
          o.name,
          value,
        );
        const data: SecretChangedOutput = {
          name: o.name,
          workspaceId: o.workspace,
          projectSlug: o.project ?? null,
          state: created ? 'created' : 'updated',
        };
        return { data, text: `Secret ${o.name} ${data.state} for ${where(o)}.` };
      }),
    );
  secret
    .command('list')
    .description('List secret names and dates (never values)')
    .requiredOption('--workspace <workspaceId>', 'workspace id')
    .option('--project <slug>', "only this project's")
    .option('--json', 'print JSON only')
    .action((o: ScopeOptions) =>
      runAction(ctx, !!o.json, async (db) => {
        const secrets = await listSecretVariables(db, { workspaceId: o.workspace, projectSlug: o.project });
        const data: SecretListOutput = { secrets };
        const lines = secrets.map(
          (s) => `${s.name}\t${s.projectSlug ? `project ${s.projectSlug}` : 'workspace'}\tupdated ${s.updatedAt}`,
        );
        return { data, text: lines.length > 0 ? lines.join('\n') : `No secrets for ${where(o)}.` };
      }),
    );
  secret
    .command('delete')
    .description('Delete a secret')
    .requiredOption('--workspace <workspaceId>', 'workspace id')
    .option('--project <slug>', "the project's secret rather than the workspace's")
    .requiredOption('--name <name>', 'the NAME of {{secrets.NAME}}')
    .option('--json', 'print JSON only')
    .action((o: ScopeOptions & { name: string }) =>
      runAction(ctx, !!o.json, async (db) => {
        await deleteSecretVariable(db, { workspaceId: o.workspace, projectSlug: o.project }, o.name);
        const data: SecretChangedOutput = {
          name: o.name,
          workspaceId: o.workspace,
          projectSlug: o.project ?? null,
          state: 'deleted',
        };
        return { data, text: `Secret ${o.name} deleted from ${where(o)}.` };
      }),
    );
}
