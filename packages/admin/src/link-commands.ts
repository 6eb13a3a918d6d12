import type { Command } from 'commander';
import { AdminError } from './operations';
import { revokeRunViewLinks, revokeViewLinks } from '@testrun/core/view-links';
import { runAction, type AdminContext } from './run-action';

/** `--json` of `suite-run revoke-links`. */
export type LinksRevokedOutput = { suiteRunId: string; revoked: true };
/** `--json` of `run revoke-links`. */
export type RunLinksRevokedOutput = { runId: string; revoked: true };

/** `suite-run revoke-links` and `run revoke-links`: ending the view links handed out (docs/VIEW.md). */
export function registerLinkCommands(admin: Command, ctx: AdminContext): void {
  const suiteRun = admin.command('suite-run').description('Manage suite runs');
  suiteRun
    .command('revoke-links')
    .description('Revoke every view link of a suite run and of its runs; links the API gives out afterwards work')
    .argument('<suiteRunId>')
    .option('--json', 'print JSON only')
    .action((suiteRunId: string, o: { json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        if (!(await revokeViewLinks(db, suiteRunId))) throw new AdminError(`No suite run "${suiteRunId}".`);
        const data: LinksRevokedOutput = { suiteRunId, revoked: true };
        return { data, text: `Revoked the view links of suite run ${suiteRunId} and of its runs.` };
      }),
    );

  const run = admin.command('run').description('Manage runs');
  run
    .command('revoke-links')
    .description('Revoke every view link of a run outside a suite run; links the API gives out afterwards work')
    .argument('<runId>')
    .option('--json', 'print JSON only')
    .action((runId: string, o: { json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const result = await revokeRunViewLinks(db, runId);
        if (!result.revoked && result.reason === 'missing') throw new AdminError(`No run "${runId}".`);
        if (!result.revoked)
          throw new AdminError(
            `Run "${runId}" belongs to suite run "${result.suiteRunId}", whose links it shares: revoke them with \`suite-run revoke-links ${result.suiteRunId}\`.`,
          );
        const data: RunLinksRevokedOutput = { runId, revoked: true };
        return { data, text: `Revoked the view links of run ${runId}.` };
      }),
    );
}
