import type { VisualApproval, VisualChange } from '@testrun/contracts';
import type { Db, DbTx } from '../db';
import { ID_PREFIX, newId } from '../ids';
import { NotFoundError } from '../projects/errors';
import { historyEntry } from './baselines';

// Approving what runs found of their snapshots (docs/VISUAL.md, "Approve where you look"): each
// change becomes the baseline of its path in the deployment its run ran, the baseline it replaces
// kept in baseline_history. A preview's approval changes the preview's baselines only; one of the
// active deployment's changes the project's, which the caller authorizes (a key's scope).

/** What is approved: a run's changes, or those of every run of a suite run. */
export type VisualTarget = { run: string } | { suiteRun: string };

/** The API key that approves (its id and name are kept with the baseline). */
type Approver = { id: string; name: string };

type ChangeRow = {
  id: string;
  run_id: string;
  deployment_id: string;
  project_id: string;
  workspace_id: string;
  name: string;
  path: string;
  kind: 'new' | 'changed';
  sha256: string;
  storage_key: string;
  content_type: string;
  size_bytes: number;
  active: boolean;
};

/** The runs a target names in its workspace; NotFoundError when it names none there. */
async function runsOf(tx: Db | DbTx, workspaceId: string, target: VisualTarget): Promise<string[]> {
  if ('run' in target) {
    const run = await tx.run.findFirst({ where: { id: target.run, workspaceId }, select: { id: true } });
    if (!run) throw new NotFoundError(`No run ${target.run} in this workspace.`);
    return [run.id];
  }
  const suiteRun = await tx.suiteRun.findFirst({ where: { id: target.suiteRun, workspaceId }, select: { id: true } });
  if (!suiteRun) throw new NotFoundError(`No suite run ${target.suiteRun} in this workspace.`);
  const runs = await tx.run.findMany({ where: { suiteRunId: suiteRun.id }, select: { id: true } });
  return runs.map((r) => r.id);
}

/**
 * How many of the target's changes await approval, and whether any is of its project's active
 * deployment (approving it would need `deploy`); NotFoundError when the target is not of the workspace.
 */
export async function pendingApprovals(
  db: Db,
  workspaceId: string,
  target: VisualTarget,
): Promise<{ pending: number; active: boolean }> {
  const runIds = await runsOf(db, workspaceId, target);
  const [row] = await db.$queryRaw<Array<{ pending: number; active: boolean }>>`
    SELECT count(*)::int AS pending, COALESCE(bool_or(p.active_deployment_id = vc.deployment_id), false) AS active
    FROM visual_changes vc
    JOIN deployments d ON d.id = vc.deployment_id
    JOIN projects p ON p.id = d.project_id
    WHERE vc.run_id = ANY(${runIds}) AND vc.approved_at IS NULL`;
  return row ?? { pending: 0, active: false };
}

/**
 * Approves the target's changes not yet approved (those of `ids` only, when given) as baselines,
 * in one transaction. `authorize` is called with whether any of them is of the project's active
 * deployment before anything changes; it throws to refuse.
 */
export function approveVisualChanges(
  db: Db,
  input: { workspaceId: string; target: VisualTarget; ids?: readonly string[] | undefined; keyId: string },
  authorize: (changesActive: boolean) => void,
): Promise<VisualApproval> {
  return db.$transaction(async (tx) => {
    const runIds = await runsOf(tx, input.workspaceId, input.target);
    const rows = await tx.$queryRaw<ChangeRow[]>`
      SELECT vc.id, vc.run_id, vc.deployment_id, d.project_id, vc.workspace_id, vc.name, vc.path, vc.kind, vc.sha256,
        vc.storage_key, vc.content_type, vc.size_bytes, COALESCE(p.active_deployment_id = vc.deployment_id, false) AS active
      FROM visual_changes vc
      JOIN deployments d ON d.id = vc.deployment_id
      JOIN projects p ON p.id = d.project_id
      WHERE vc.run_id = ANY(${runIds}) AND vc.approved_at IS NULL
        AND (${input.ids ?? null}::text[] IS NULL OR vc.id = ANY(${input.ids ?? null}::text[]))
      ORDER BY vc.run_id, vc.path
      FOR UPDATE OF vc`;
    authorize(rows.some((r) => r.active));
    const key = await tx.apiKey.findUnique({ where: { id: input.keyId }, select: { name: true } });
    const approver = { id: input.keyId, name: key?.name ?? input.keyId };
    const approvedAt = new Date();
    for (const row of rows) await makeBaseline(tx, row, approver, approvedAt);
    const approved = rows.map((r) => wireChange(r, { approvedAt, approvedBy: approver.name }));
    return { approved, deployments: [...new Set(rows.map((r) => r.deployment_id))] };
  });
}

/** The change's image as its path's baseline in its deployment, the baseline before it kept in the history. */
async function makeBaseline(tx: DbTx, row: ChangeRow, approver: Approver, approvedAt: Date): Promise<void> {
  const current = await tx.baseline.findUnique({
    where: { deploymentId_path: { deploymentId: row.deployment_id, path: row.path } },
  });
  const image = {
    sha256: row.sha256,
    storageKey: row.storage_key,
    contentType: row.content_type,
    sizeBytes: row.size_bytes,
    status: 'approved',
    runId: row.run_id,
    approvedByKeyId: approver.id,
    approvedByKeyName: approver.name,
    approvedAt,
  };
  if (current) {
    await tx.baselineHistory.create({ data: historyEntry(current, approvedAt) });
    await tx.baseline.update({ where: { id: current.id }, data: { ...image, createdAt: approvedAt } });
  } else {
    await tx.baseline.create({
      data: {
        id: newId(ID_PREFIX.baseline),
        workspaceId: row.workspace_id,
        projectId: row.project_id,
        deploymentId: row.deployment_id,
        path: row.path,
        ...image,
      },
    });
  }
  await tx.visualChange.update({
    where: { id: row.id },
    data: { approvedByKeyId: approver.id, approvedByKeyName: approver.name, approvedAt },
  });
}

function wireChange(
  row: Pick<ChangeRow, 'id' | 'name' | 'path' | 'kind'>,
  approval: { approvedAt: Date | null; approvedBy: string | null },
): VisualChange {
  return {
    id: row.id,
    name: row.name,
    path: row.path,
    kind: row.kind,
    approved: approval.approvedAt !== null,
    approved_at: approval.approvedAt?.toISOString() ?? null,
    approved_by: approval.approvedBy,
  };
}
