// What a rerun of a suite run reads of the original: its sealed copy and the children to run again.
import type { DbTx, Prisma } from '../db';

/** The suite run a rerun repeats, with its sealed copy of headers and variables. */
export type RerunOriginal = {
  suite_id: string;
  status: string;
  headers_sealed: Uint8Array | null;
  variables_sealed: Uint8Array | null;
  sealed_fields: string | null;
  /** Whether the sealed copy is still kept (see SEALED_COPY_TTL_MS). */
  copy_kept: boolean;
  project_id: string;
  /** The deployment it executed, which the rerun executes again; null for one from before deployments. */
  deployment_id: string | null;
};

/** A child of the original to run again, with what its test and project say now. */
export type RerunChild = {
  test_id: string;
  base_url: string;
  enabled: boolean;
  evidence: Prisma.JsonValue;
  project_evidence: Prisma.JsonValue;
};

/** The suite run `suiteRunId` of the workspace, or null when the workspace has none by that id. */
export async function readRerunOriginal(
  tx: DbTx,
  workspaceId: string,
  suiteRunId: string,
): Promise<RerunOriginal | null> {
  const [original] = await tx.$queryRaw<RerunOriginal[]>`
    SELECT suite_id, status::text AS status, headers_sealed, variables_sealed, sealed_fields,
      COALESCE(sealed_until > now(), false) AS copy_kept, project_id, deployment_id
    FROM suite_runs WHERE id = ${suiteRunId} AND workspace_id = ${workspaceId}`;
  return original ?? null;
}

/**
 * The children of a suite run to run again, in their order: all of them, or those that ended failed
 * or error. What decides each run is read from the live rows, or from `definitionsOf`'s own
 * definitions when the rerun executes a deployment other than the active one.
 */
export async function readRerunChildren(
  tx: DbTx,
  suiteRunId: string,
  only: 'all' | 'failed',
  definitionsOf: string | null = null,
): Promise<RerunChild[]> {
  return tx.$queryRaw<RerunChild[]>`
    SELECT r.test_id, r.base_url,
      CASE WHEN d.test_id IS NULL THEN t.enabled ELSE d.enabled END AS enabled,
      CASE WHEN d.test_id IS NULL THEN t.evidence ELSE d.evidence END AS evidence,
      CASE WHEN d.test_id IS NULL THEN p.evidence ELSE dep.document -> 'evidence' END AS project_evidence
    FROM runs r JOIN tests t ON t.id = r.test_id JOIN projects p ON p.id = t.project_id
      LEFT JOIN LATERAL (SELECT * FROM deployment_tests dt WHERE dt.deployment_id = ${definitionsOf}::text
        AND dt.test_id = r.test_id ORDER BY dt.position LIMIT 1) d ON true
      LEFT JOIN deployments dep ON dep.id = d.deployment_id
    WHERE r.suite_run_id = ${suiteRunId} AND (${only} = 'all' OR r.status IN ('failed', 'error'))
    ORDER BY r.position`;
}
