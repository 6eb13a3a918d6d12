// The evidence of a setup test's shown execution (docs/PLAYWRIGHT.md, "Setup projects"): Playwright's
// screenshot, trace and video, and what the setup test attached, kept as a run's are. Each row names
// the execution it is of; a setup test's entry shows those of the execution it shows, and the rows
// of an execution it no longer shows are deleted by the next that records its own.
import type { ArtifactKind } from '@testrun/contracts';
import { readSql, type Db } from '../db';
import type { SetupOwnerId } from './setup-results';

/** One stored file of a setup test's execution. */
export type SetupArtifactRow = {
  id: string;
  workspaceId: string;
  setupResultId: string;
  /** The run whose sandbox ran the execution: its file is under that run's key prefix. */
  runId: string;
  executionId: string;
  kind: ArtifactKind;
  name: string;
  storageKey: string;
  contentType: string;
  sizeBytes: number;
};

export async function insertSetupArtifacts(db: Db, rows: readonly SetupArtifactRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.setupArtifact.createMany({ data: [...rows] });
}

/**
 * Deletes the rows of a setup test's executions its entry no longer shows; returns their files'
 * keys, for the caller to delete from the store (a row whose file is gone is never served).
 */
export async function dropHiddenSetupArtifacts(db: Db, setupResultId: string): Promise<string[]> {
  const rows = await db.$queryRaw<{ storage_key: string }[]>`
    DELETE FROM setup_artifacts a USING setup_results s
    WHERE a.setup_result_id = ${setupResultId} AND s.id = a.setup_result_id
      AND a.execution_id IS DISTINCT FROM s.execution_id
    RETURNING a.storage_key`;
  return rows.map((row) => row.storage_key);
}

/** A stored file as the view serves it: a run's artifact or a setup test's (apps/api view/artifacts.ts). */
export type ServedArtifact = {
  id: string;
  kind: string;
  name: string;
  storageKey: string;
  contentType: string;
  sizeBytes: number;
};

/**
 * The file of a setup test's shown execution, if it belongs to the suite run (or the run outside a
 * suite run) whose view asks for it; null otherwise, whatever workspace's it is.
 */
export async function findSetupArtifact(
  db: Db,
  owner: SetupOwnerId,
  artifactId: string,
): Promise<ServedArtifact | null> {
  const [column, id] = 'suiteRunId' in owner ? ['suite_run_id', owner.suiteRunId] : ['run_id', owner.runId];
  const rows = await readSql<ServedArtifact>(
    db,
    `setup_artifact_by_${column}`,
    `SELECT a.id, a.kind::text AS kind, a.name, a.storage_key AS "storageKey", a.content_type AS "contentType",
        a.size_bytes AS "sizeBytes"
      FROM setup_artifacts a JOIN setup_results s ON s.id = a.setup_result_id AND s.execution_id = a.execution_id
      WHERE a.id = $1 AND s.${column} = $2`,
    [artifactId, id],
  );
  return rows[0] ?? null;
}
