import type { ArtifactKind } from '@testrun/contracts';

/** An artifact row written together with a run's terminal state (column names as in the table). */
export type ArtifactRow = {
  id: string;
  run_id: string;
  workspace_id: string;
  attempt: number;
  kind: ArtifactKind;
  step_index: number | null;
  name: string;
  storage_key: string;
  content_type: string;
  size_bytes: number;
};

/**
 * The INSERT that records a run's last artifacts (its trace and video) together with the write
 * that ends its attempt: `$<param>` is the JSON array of ArtifactRow. As the body of a CTE.
 */
export function insertArtifactsSql(param: number): string {
  return `INSERT INTO artifacts (id, run_id, workspace_id, attempt, kind, step_index, name, storage_key, content_type, size_bytes)
       SELECT x.id, x.run_id, x.workspace_id, x.attempt, x.kind::"ArtifactKind", x.step_index, x.name, x.storage_key, x.content_type, x.size_bytes
       FROM jsonb_to_recordset($${param}::jsonb) AS x(id text, run_id text, workspace_id text, attempt int, kind text, step_index int,
         name text, storage_key text, content_type text, size_bytes int)
       RETURNING id`;
}
