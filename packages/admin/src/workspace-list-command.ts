import type { Command } from 'commander';
import type { Plan } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';

/** One workspace of `workspace list --json`: its plan and limits, and who can reach it. */
type WorkspaceListing = {
  id: string;
  name: string;
  plan: Plan;
  maxActiveRuns: number;
  monthlyRuns: number;
  createdAt: string;
  /** People in the workspace. */
  members: number;
  /** Keys not revoked (paused ones included: they work again when resumed). */
  activeKeys: number;
};
/** `--json` of `workspace list`, as `secret list` and `webhook list` give theirs. */
export type WorkspaceListOutput = { workspaces: WorkspaceListing[] };

/** How a command runs its action: the admin CLI's `runAction`, given by the caller. */
type RunAction = (json: boolean, action: (db: Db) => Promise<{ data: object; text: string }>) => Promise<void>;

/** Every workspace, oldest first, with its member and unrevoked key counts. */
async function listWorkspaces(db: Db): Promise<WorkspaceListing[]> {
  const rows = await db.workspace.findMany({
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: {
      id: true,
      name: true,
      plan: true,
      maxActiveRuns: true,
      monthlyRuns: true,
      createdAt: true,
      _count: { select: { memberships: true, apiKeys: { where: { revokedAt: null } } } },
    },
  });
  return rows.map(({ _count, createdAt, ...ws }) => ({
    ...ws,
    createdAt: createdAt.toISOString(),
    members: _count.memberships,
    activeKeys: _count.apiKeys,
  }));
}

/**
 * `testrun admin workspace list`: the ids an operator needs for every other command, with each
 * workspace's plan and limits. One tab-separated line per workspace, or one JSON document.
 */
export function registerWorkspaceListCommand(workspace: Command, runAction: RunAction): void {
  workspace
    .command('list')
    .description('List every workspace: id, name, plan, limits, members and unrevoked keys')
    .option('--json', 'print JSON only')
    .action((o: { json?: boolean }) =>
      runAction(!!o.json, async (db) => {
        const workspaces = await listWorkspaces(db);
        const data: WorkspaceListOutput = { workspaces };
        const lines = workspaces.map(
          (w) =>
            `${w.id}\t${w.name}\t${w.plan}\t${w.maxActiveRuns} active / ${w.monthlyRuns} a month\t` +
            `${w.members} members\t${w.activeKeys} keys\tcreated ${w.createdAt}`,
        );
        return { data, text: lines.length > 0 ? lines.join('\n') : 'No workspaces.' };
      }),
    );
}
