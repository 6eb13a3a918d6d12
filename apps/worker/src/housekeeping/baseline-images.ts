import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import {
  deleteDueImage,
  dueImageCandidates,
  forgetImageCandidates,
  isBaselineImageKey,
  postponeImageCandidates,
  unreferencedImages,
} from '@testrun/core/visual';

// Deletes baseline images no row refers to any more (docs/VISUAL.md, "Storage"). Candidates come
// from Postgres (a trigger notes every key a row stops referring to), never from listing the store.
// The race to guard against: a worker stores an image (put), then records the row that refers to
// it; an image of the same bytes has the same key, so a candidate may be written again by a run
// right now, with its row not yet there. Every writer notes the key as a candidate before its put
// (storeBaselineImage), so such an image's candidate is fresh and left for the grace period; an
// image is deleted holding its candidate's row, after reading again that it is due and that no row
// refers to it (deleteDueImage), so a writer noting it meanwhile waits and stores it afterwards. A
// put also refreshes the image's modification time in both stores: an image written within the
// grace period is left for later.

/** How long an image must have been left unwritten, and a candidate noted, before it is deleted. Default of {@link collectBaselineImages}. */
const IMAGE_GRACE_MS = 60 * 60 * 1000;

/** Store calls at once: enough to hide an object store's latency, few enough not to flood it. */
const STORE_CONCURRENCY = 16;

/** Options of {@link collectBaselineImages}. */
export type ImageCollectionOptions = {
  db: Db;
  store: ArtifactStore;
  /** Candidates looked at per batch. Default 200. */
  batchSize?: number;
  /** Default {@link IMAGE_GRACE_MS}; far longer than a worker takes from storing an image to recording its row. */
  graceMs?: number;
  /** No new batch starts once `performance.now()` passes this (one batch always runs). */
  deadline?: number;
};

/** What one {@link collectBaselineImages} call did. */
export type ImageCollectionReport = {
  /** Images deleted from the store. */
  deleted: number;
  /** False when the deadline came with candidates left: the next call goes on. */
  done: boolean;
};

/** `task` over `items`, at most {@link STORE_CONCURRENCY} at once; the results in order. */
async function eachAtOnce<T, R>(items: readonly T[], task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(STORE_CONCURRENCY, items.length) }, lane));
  return results;
}

/**
 * One batch: the due candidates still referred to are forgotten; of the others, an image written
 * within the grace period is postponed, one already gone forgotten, and the rest deleted once a
 * last look finds no row referring to them. Files before rows: a candidate is forgotten only after
 * its image is deleted, so a crash between leaves a candidate whose image is gone (forgotten next
 * time), never an image nothing leads to. Returns how many images it deleted, or null when it
 * settled no candidate.
 */
async function collectBatch(options: ImageCollectionOptions, graceMs: number, limit: number): Promise<number | null> {
  const { db, store } = options;
  const { keys: due, readAt } = await dueImageCandidates(db, graceMs, limit);
  if (due.length === 0) return null;
  const unreferenced = new Set(await unreferencedImages(db, due.filter(isBaselineImageKey)));
  const looked = await eachAtOnce([...unreferenced], async (key) => ({ key, at: await store.modifiedAt(key) }));
  const writtenBefore = Date.now() - graceMs;
  const fresh = looked.flatMap(({ key, at }) => (at !== null && at.getTime() > writtenBefore ? [key] : []));
  const stale = looked.flatMap(({ key, at }) => (at !== null && at.getTime() <= writtenBefore ? [key] : []));
  // The last look, holding the candidate: a row recorded, or a writer's note, since the first one keeps its image.
  // One at a time: each holds a connection of the pool while the store deletes.
  const doomed: string[] = [];
  for (const key of stale) if (await deleteDueImage(db, key, graceMs, () => store.delete(key))) doomed.push(key);
  await postponeImageCandidates(db, fresh);
  const freshSet = new Set(fresh);
  await forgetImageCandidates(
    db,
    due.filter((key) => !freshSet.has(key)),
    readAt,
  );
  // Only postponed ones (possible with no grace and a store clock ahead): the next call goes on.
  return fresh.length === due.length ? null : doomed.length;
}

/**
 * Deletes the images of due candidates that no row refers to, in batches, until none is left or
 * the deadline passes. Candidates are due `graceMs` after they were noted, and an image is deleted
 * only when the store has not written it for `graceMs` either.
 */
export async function collectBaselineImages(options: ImageCollectionOptions): Promise<ImageCollectionReport> {
  const graceMs = options.graceMs ?? IMAGE_GRACE_MS;
  const limit = options.batchSize ?? 200;
  const report: ImageCollectionReport = { deleted: 0, done: false };
  for (;;) {
    const deleted = await collectBatch(options, graceMs, limit);
    if (deleted === null) break;
    report.deleted += deleted;
    if (options.deadline !== undefined && performance.now() >= options.deadline) return report;
  }
  report.done = true;
  return report;
}
