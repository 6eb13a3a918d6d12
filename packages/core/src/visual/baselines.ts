import type { Db, DbTx } from '../db';
import { ID_PREFIX, newId } from '../ids';

// The baselines of visual comparison (docs/VISUAL.md, "Baselines follow versions"): a deployment's
// own baseline of a snapshot path, else the project's active deployment's. Activating a deployment
// copies in the baselines of the one active before it that it lacks, so each version that was once
// active keeps its whole set, and rolling back to it restores that set.

/** Where a workspace's baseline image of a SHA-256 is stored: once, whatever snapshots share it. */
export function baselineKey(workspaceId: string, sha256: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`not a SHA-256: ${sha256}`);
  return `baselines/${workspaceId}/${sha256}`;
}

/** A baseline a run compares against: its path in the bundle and where its image is stored. */
export interface BaselineFile {
  path: string;
  sha256: string;
  storageKey: string;
  sizeBytes: number;
}

/** At most this many baselines are placed for one sandbox (the rest are compared as missing). */
export const MAX_BASELINES_PER_RUN = 5_000;

/**
 * The baselines a run compares against: of each path, its deployment's own, else the project's
 * active deployment's; none for a run of no deployment. One query, whatever the number of snapshots.
 */
export function baselinesForRun(db: DbTx, runId: string): Promise<BaselineFile[]> {
  return db.$queryRaw<BaselineFile[]>`
    SELECT DISTINCT ON (b.path) b.path, b.sha256, b.storage_key AS "storageKey", b.size_bytes AS "sizeBytes"
    FROM runs r
    JOIN projects p ON p.id = r.project_id
    JOIN baselines b ON b.deployment_id = r.deployment_id OR b.deployment_id = p.active_deployment_id
    WHERE r.id = ${runId}
    ORDER BY b.path, (b.deployment_id IS NOT DISTINCT FROM r.deployment_id) DESC
    LIMIT ${MAX_BASELINES_PER_RUN}`;
}

/** A snapshot a run found new or changed, its image stored under `storageKey`. */
export interface VisualFinding {
  kind: 'new' | 'changed';
  name: string;
  path: string;
  sha256: string;
  storageKey: string;
  contentType: string;
  sizeBytes: number;
}

/**
 * Records what a run's attempt found of its snapshots, in one transaction: each as a visual change
 * of the run (a later attempt's replaces an earlier one's of the same path, unapproved), and each new
 * one as its deployment's baseline awaiting approval, unless the deployment got one meanwhile.
 * Nothing for a run of no deployment.
 */
export async function recordVisualFindings(db: Db, runId: string, findings: readonly VisualFinding[]): Promise<void> {
  if (findings.length === 0) return;
  await db.$transaction(async (tx) => {
    for (const f of findings) {
      await tx.$executeRaw`
        INSERT INTO visual_changes (id, workspace_id, run_id, deployment_id, name, path, kind, sha256, storage_key, content_type, size_bytes)
        SELECT ${newId(ID_PREFIX.visualChange)}, r.workspace_id, r.id, r.deployment_id, ${f.name}, ${f.path}, ${f.kind}, ${f.sha256},
          ${f.storageKey}, ${f.contentType}, ${f.sizeBytes}
        FROM runs r WHERE r.id = ${runId} AND r.deployment_id IS NOT NULL
        ON CONFLICT (run_id, path) DO UPDATE SET name = EXCLUDED.name, kind = EXCLUDED.kind, sha256 = EXCLUDED.sha256,
          storage_key = EXCLUDED.storage_key, content_type = EXCLUDED.content_type, size_bytes = EXCLUDED.size_bytes,
          approved_by_key_id = NULL, approved_by_key_name = NULL, approved_at = NULL, created_at = now()`;
      if (f.kind !== 'new') continue;
      await tx.$executeRaw`
        INSERT INTO baselines (id, workspace_id, project_id, deployment_id, path, sha256, storage_key, content_type, size_bytes, status, run_id)
        SELECT ${newId(ID_PREFIX.baseline)}, r.workspace_id, r.project_id, r.deployment_id, ${f.path}, ${f.sha256}, ${f.storageKey},
          ${f.contentType}, ${f.sizeBytes}, 'new', r.id
        FROM runs r WHERE r.id = ${runId} AND r.deployment_id IS NOT NULL
        ON CONFLICT (deployment_id, path) DO NOTHING`;
    }
  });
}

/**
 * Called as `deploymentId` becomes its project's active deployment, in that transaction: copies in
 * the baselines of `previousId` (the deployment active until now) whose paths it has none of.
 */
export async function inheritBaselines(tx: DbTx, previousId: string | null, deploymentId: string): Promise<void> {
  if (previousId === null || previousId === deploymentId) return;
  const missing = await tx.baseline.findMany({
    where: { deploymentId: previousId, NOT: { path: { in: await ownPaths(tx, deploymentId) } } },
  });
  if (missing.length === 0) return;
  await tx.baseline.createMany({
    data: missing.map(({ id: _id, ...row }) => ({ ...row, id: newId(ID_PREFIX.baseline), deploymentId })),
  });
}

async function ownPaths(tx: DbTx, deploymentId: string): Promise<string[]> {
  const rows = await tx.baseline.findMany({ where: { deploymentId }, select: { path: true } });
  return rows.map((r) => r.path);
}

/** A baseline row, as much of it as its history keeps. */
type ReplacedBaseline = {
  workspaceId: string;
  deploymentId: string;
  path: string;
  sha256: string;
  storageKey: string;
  status: string;
  runId: string | null;
  approvedByKeyName: string | null;
  approvedAt: Date | null;
  createdAt: Date;
};

/**
 * The baseline_history entry of `replaced`, replaced at `replacedAt` in `deploymentId` (its own
 * deployment's, unless an import into a new deployment replaced the active one's).
 */
export function historyEntry(replaced: ReplacedBaseline, replacedAt: Date, deploymentId = replaced.deploymentId) {
  return {
    id: newId(ID_PREFIX.baselineHistory),
    workspaceId: replaced.workspaceId,
    deploymentId,
    path: replaced.path,
    sha256: replaced.sha256,
    storageKey: replaced.storageKey,
    status: replaced.status,
    runId: replaced.runId,
    approvedByKeyName: replaced.approvedByKeyName,
    approvedAt: replaced.approvedAt,
    createdAt: replaced.createdAt,
    replacedAt,
  };
}

/** A baseline a deployment imports from its bundle (`playwright.importBaselines`), its image stored. */
export interface ImportedBaseline {
  path: string;
  sha256: string;
  storageKey: string;
  contentType: string;
  sizeBytes: number;
}

/** Who approved an imported baseline, as its `approved_by_key_name` says. */
export const IMPORTED_AT_DEPLOY = 'imported from the bundle at deploy';

/**
 * Records a new deployment's imported baselines, in its deploying transaction and before it may
 * become active (so inheritBaselines copies in only the paths it lacks): each approved, by
 * {@link IMPORTED_AT_DEPLOY} (with the deploying key's id, when a key deployed). Of each path whose
 * baseline of the project's active deployment (`activeId`) differs, that one is kept in the new
 * deployment's `baseline_history`: it is what its runs compared against, and activating would have
 * copied in, before the import.
 */
export async function recordImportedBaselines(
  tx: DbTx,
  deployment: { id: string; workspaceId: string; projectId: string; activeId: string | null; keyId: string | null },
  baselines: readonly ImportedBaseline[],
): Promise<void> {
  if (baselines.length === 0) return;
  const approvedAt = new Date();
  const replaced =
    deployment.activeId === null
      ? []
      : await tx.baseline.findMany({
          where: { deploymentId: deployment.activeId, path: { in: baselines.map((b) => b.path) } },
        });
  const imported = new Map(baselines.map((b) => [b.path, b.sha256]));
  const history = replaced.filter((r) => imported.get(r.path) !== r.sha256);
  if (history.length > 0)
    await tx.baselineHistory.createMany({ data: history.map((r) => historyEntry(r, approvedAt, deployment.id)) });
  await tx.baseline.createMany({
    data: baselines.map((b) => ({
      id: newId(ID_PREFIX.baseline),
      workspaceId: deployment.workspaceId,
      projectId: deployment.projectId,
      deploymentId: deployment.id,
      ...b,
      status: 'approved',
      approvedByKeyId: deployment.keyId,
      approvedByKeyName: IMPORTED_AT_DEPLOY,
      approvedAt,
    })),
  });
}
