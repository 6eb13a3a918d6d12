import type { Db } from '../db';

/** BullMQ's highest priority number (the lowest priority it accepts). */
const MAX_PRIORITY = 2_097_152;

/**
 * The place of each run in its workspace's line: 1 + the workspace's other runs queued or running
 * (not among `runIds`) + the runs of `runIds` before it in the same workspace (creation, then
 * request order). It is the
 * run's BullMQ priority (lower is served first), so workers serve workspaces round-robin: every
 * workspace's first waiting run comes before any workspace's second, and a workspace with hundreds
 * of queued runs delays another's first run by at most the runs already in flight. Runs of one
 * workspace keep their order; equal places are served in the order their jobs were added.
 */
export async function fairPositions(db: Db, runIds: readonly string[]): Promise<Map<string, number>> {
  if (runIds.length === 0) return new Map();
  const ids = [...runIds];
  const rows = await db.$queryRaw<Array<{ id: string; position: number }>>`
    WITH mine AS (SELECT id, workspace_id, created_at, position FROM runs WHERE id = ANY(${ids}::text[])),
    others AS (
      SELECT o.workspace_id, count(*)::int AS n FROM runs o
      WHERE o.workspace_id IN (SELECT workspace_id FROM mine) AND o.status IN ('queued', 'running')
        AND o.id <> ALL(${ids}::text[])
      GROUP BY o.workspace_id
    )
    SELECT m.id, (COALESCE(ot.n, 0) + row_number() OVER (PARTITION BY m.workspace_id ORDER BY m.created_at, m.position, m.id))::int AS position
    FROM mine m LEFT JOIN others ot ON ot.workspace_id = m.workspace_id`;
  return new Map(rows.map((row) => [row.id, queuePriority(row.position)]));
}

/**
 * What {@link fairPositions} gives runs just created in one workspace, in request order, without
 * reading them back: `ahead` is the count of the workspace's other runs queued or running, as read
 * by the request that created them.
 */
export function positionsAfter(ahead: number, runIds: readonly string[]): Map<string, number> {
  return new Map(runIds.map((id, i) => [id, queuePriority(ahead + i + 1)]));
}

/** A place in line as a BullMQ priority (1 up to the highest number BullMQ accepts). */
export function queuePriority(position: number): number {
  return Math.min(Math.max(position, 1), MAX_PRIORITY);
}
