import { InvalidArgumentError, type Command } from 'commander';
import { AdminError } from './operations';
import type { Db } from '@testrun/core/db';
import { runAction, type AdminContext } from './run-action';

/** `--json` of `workspace set-retention`: the workspace's own retention in days; null uses the deployment's default. */
export type RetentionOutput = { id: string; artifactRetentionDays: number | null; runRetentionDays: number | null };

/** The most days a retention may be: the migrations' CHECK holds the columns to 1 to 36500. */
const MAX_DAYS = 36_500;

/** `default` gives the setting back to the deployment (ARTIFACT_RETENTION_DAYS / RUN_RETENTION_DAYS). */
type Days = number | 'default';

/** A number of days, or `default`. (Not null for it: commander takes a parser's null for no value.) */
function parseDays(value: string): Days {
  if (value === 'default') return value;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_DAYS)
    throw new InvalidArgumentError(`must be a whole number of days from 1 to ${MAX_DAYS}, or "default"`);
  return Number(value);
}

function describe(days: number | null, what: string, variable: string): string {
  return days === null ? `${what} for the deployment's ${variable}` : `${what} for ${days} days`;
}

async function setRetention(
  db: Db,
  workspaceId: string,
  o: { artifacts?: Days; runs?: Days },
): Promise<RetentionOutput> {
  const stored = (days: Days | undefined) => (days === 'default' ? null : days);
  if (o.artifacts === undefined && o.runs === undefined) throw new AdminError('give --artifacts, --runs or both');
  const ws = await db.workspace.findUnique({ where: { id: workspaceId }, select: { id: true } });
  if (!ws) throw new AdminError(`workspace ${workspaceId} does not exist`);
  const updated = await db.workspace.update({
    where: { id: workspaceId },
    data: { artifactRetentionDays: stored(o.artifacts), runRetentionDays: stored(o.runs) },
    select: { id: true, artifactRetentionDays: true, runRetentionDays: true },
  });
  return updated;
}

/**
 * `testrun admin workspace set-retention`: how long a workspace's artifacts and runs are kept, in
 * place of the deployment's defaults; the worker's reconciler deletes what is older (docs/OPERATIONS.md).
 */
export function registerRetentionCommand(workspace: Command, ctx: AdminContext): void {
  workspace
    .command('set-retention')
    .description('Keep a workspace\'s artifacts and runs for so many days ("default": the deployment\'s)')
    .argument('<workspaceId>')
    .option('--artifacts <days>', 'days screenshots, traces and videos are kept, or "default"', parseDays)
    .option('--runs <days>', 'days runs (steps, suite runs) are kept, or "default"', parseDays)
    .option('--json', 'print JSON only')
    .action((workspaceId: string, o: { artifacts?: Days; runs?: Days; json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const out = await setRetention(db, workspaceId, o);
        return {
          data: out,
          text: `Workspace ${out.id} keeps ${describe(out.artifactRetentionDays, 'artifacts', 'ARTIFACT_RETENTION_DAYS')} and ${describe(out.runRetentionDays, 'runs', 'RUN_RETENTION_DAYS')}.`,
        };
      }),
    );
}
