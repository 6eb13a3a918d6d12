import type { ArtifactStore } from '../artifact-store';
import type { Db, DbTx } from '../db';

// The queries of the collection of baseline images (docs/VISUAL.md, "Storage"). An image is stored
// once per workspace by its SHA-256 and referred to by the storage_key of baselines,
// baseline_history and visual_changes rows; a trigger notes a key as a candidate whenever one of them
// stops referring to it (migration 20261207110000_baseline_image_collection), so the store is never
// listed. The worker's housekeeping deletes a candidate's image once no row refers to it.
//
// A writer notes the key too, before it stores the image (storeBaselineImage): the candidate is then
// fresh, so the collection leaves the image alone for its grace period, by which time the row that
// refers to it is recorded; and if the writer died before recording it, the image is collected
// then. The collection deletes an image holding its candidate's row (deleteDueImage), so a writer
// noting the same key waits until the deletion is done and stores the image after it.

/** The only keys the collection ever deletes: a workspace's baseline image by its SHA-256 (see baselineKey). */
const IMAGE_KEY = /^baselines\/[A-Za-z0-9_-]+\/[0-9a-f]{64}$/;

/** True for a key of a baseline image, as baselineKey makes them; anything else is never deleted. */
export function isBaselineImageKey(key: string): boolean {
  return IMAGE_KEY.test(key);
}

/**
 * Stores a baseline image under `key` (`baselines/<workspace>/<sha256>`), its key noted as a
 * candidate first (see above): an image is never stored without a row that leads to it, and never
 * deleted by the collection between its put and the row that refers to it.
 */
export async function storeBaselineImage(db: Db, store: ArtifactStore, key: string, body: Buffer): Promise<void> {
  await db.$executeRaw`
    INSERT INTO baseline_image_candidates (storage_key, noticed_at) VALUES (${key}, clock_timestamp())
    ON CONFLICT (storage_key) DO UPDATE SET noticed_at = EXCLUDED.noticed_at`;
  await store.put(key, body);
}

/**
 * Deletes the image of `key` with `remove` while holding its candidate's row, if the candidate is
 * still due (noted at least `graceMs` ago: no writer noted it since) and no row refers to the key;
 * forgets the candidate with it. True when it deleted. A writer noting the key meanwhile waits for
 * this to end, then stores the image again.
 */
export function deleteDueImage(db: Db, key: string, graceMs: number, remove: () => Promise<void>): Promise<boolean> {
  return db.$transaction(
    async (tx) => {
      const held = await tx.$queryRaw<Array<{ held: number }>>`
        SELECT 1 AS held FROM baseline_image_candidates
        WHERE storage_key = ${key} AND noticed_at <= clock_timestamp() - make_interval(secs => ${graceMs / 1000})
        FOR UPDATE`;
      if (held.length === 0) return false;
      if ((await unreferencedImages(tx, [key])).length === 0) return false;
      await remove();
      await tx.$executeRaw`DELETE FROM baseline_image_candidates WHERE storage_key = ${key}`;
      return true;
    },
    // The store's delete happens inside: an object store may be slow to answer.
    { timeout: 60_000 },
  );
}

/** Due candidates, and when they were read (by the database's clock): see {@link forgetImageCandidates}. */
export type DueImages = { keys: string[]; readAt: Date };

/** Candidates noted (or last postponed) at least `graceMs` ago, oldest first. */
export async function dueImageCandidates(db: Db, graceMs: number, limit: number): Promise<DueImages> {
  const rows = await db.$queryRaw<Array<{ storage_key: string }>>`
    SELECT storage_key FROM baseline_image_candidates
    WHERE noticed_at <= now() - make_interval(secs => ${graceMs / 1000})
    ORDER BY noticed_at LIMIT ${limit}`;
  if (rows.length === 0) return { keys: [], readAt: new Date(0) };
  // Read before any of them is looked at: a candidate noted again after this is not forgotten.
  const [now] = await db.$queryRaw<Array<{ at: Date }>>`SELECT clock_timestamp() AS at`;
  return { keys: rows.map((r) => r.storage_key), readAt: now?.at ?? new Date(0) };
}

/**
 * Those of `keys` that no baselines, baseline_history or visual_changes row refers to, in one
 * statement (one snapshot of the three tables: an approval that moves a key from a baseline to the
 * history, in one transaction, is seen before or after, never half way).
 */
export async function unreferencedImages(db: Db | DbTx, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const rows = await db.$queryRaw<Array<{ key: string }>>`
    SELECT k.key FROM unnest(${keys}::text[]) AS k(key)
    WHERE NOT EXISTS (SELECT 1 FROM baselines b WHERE b.storage_key = k.key)
      AND NOT EXISTS (SELECT 1 FROM baseline_history h WHERE h.storage_key = k.key)
      AND NOT EXISTS (SELECT 1 FROM visual_changes v WHERE v.storage_key = k.key)`;
  return rows.map((r) => r.key);
}

/**
 * Forgets candidates read at `readAt`: their image is deleted, gone, or referred to again. One noted
 * again after that (a row referring to it released meanwhile) stays, to be looked at anew.
 */
export async function forgetImageCandidates(db: Db, keys: readonly string[], readAt: Date): Promise<void> {
  if (keys.length === 0) return;
  await db.$executeRaw`
    DELETE FROM baseline_image_candidates WHERE storage_key = ANY(${keys}::text[]) AND noticed_at <= ${readAt}`;
}

/** Looks at candidates again after another grace period: their image was written too recently to delete. */
export async function postponeImageCandidates(db: Db, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await db.$executeRaw`UPDATE baseline_image_candidates SET noticed_at = clock_timestamp() WHERE storage_key = ANY(${keys}::text[])`;
}

/**
 * Deletes at most `limit` baseline_history entries replaced longer ago than their workspace's run
 * retention (`run_retention_days`, else `defaultDays`): by then the runs they came from are gone
 * too. The trigger notes their images as candidates. Returns how many were deleted.
 */
export function trimBaselineHistory(db: Db, defaultDays: number, limit: number): Promise<number> {
  return db.$executeRaw`
    DELETE FROM baseline_history WHERE id IN (
      SELECT h.id FROM workspaces w
      CROSS JOIN LATERAL (
        SELECT id FROM baseline_history
        WHERE workspace_id = w.id
          AND replaced_at < now() - make_interval(days => COALESCE(w.run_retention_days, ${defaultDays}::int))
        ORDER BY replaced_at LIMIT ${limit}) h
      LIMIT ${limit})`;
}
