// Visual comparison on the worker (docs/VISUAL.md): the baselines a sandbox's snapshots compare
// against, fetched once per sandbox, and what a test's last try found new or changed, kept: the
// image it took stored once per workspace by its SHA-256, its finding recorded in Postgres (one
// transaction per test, none for a snapshot that matched).
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import {
  baselineKey,
  baselinesForRun,
  isStepBaselinePath,
  recordVisualFindings,
  storeBaselineImage,
  type BaselineFile,
  type VisualFinding,
} from '@testrun/core/visual';
import { readScratchFile, ScratchPathError } from '../../sandbox';
import type { PlacedBaseline, SnapshotFinding } from './runner/types';

/** The most bytes of baselines placed in one sandbox; those past it are compared as missing. */
const MAX_BASELINE_BYTES = 256 * 1024 * 1024;
/** Baselines fetched from the store at once. */
const FETCHES_AT_ONCE = 8;

/** Fetches `files` from the store, a few at a time, in order; one that is gone is left out. */
async function fetchAll(store: ArtifactStore, files: readonly BaselineFile[]): Promise<PlacedBaseline[]> {
  const placed: (PlacedBaseline | null)[] = [];
  for (let i = 0; i < files.length; i += FETCHES_AT_ONCE) {
    const chunk = files.slice(i, i + FETCHES_AT_ONCE);
    placed.push(
      ...(await Promise.all(
        chunk.map(async (f) => {
          const body = await store.get(f.storageKey);
          return body === null ? null : { path: f.path, body };
        }),
      )),
    );
  }
  return placed.filter((p): p is PlacedBaseline => p !== null);
}

/** The baselines of the worker's runs and what their snapshots found. */
export class VisualStore {
  constructor(
    private readonly db: Db,
    private readonly store: ArtifactStore,
  ) {}

  /** The baselines a run's sandbox places in its bundle (its deployment's, else the active one's), within the byte cap. */
  async baselinesFor(runId: string): Promise<PlacedBaseline[]> {
    // A step test's baselines (the project's other kind of test) are never a path in the bundle: not fetched.
    const rows = (await baselinesForRun(this.db, runId)).filter((r) => !isStepBaselinePath(r.path));
    let bytes = 0;
    const within = rows.filter((r) => (bytes += r.sizeBytes) <= MAX_BASELINE_BYTES);
    return fetchAll(this.store, within);
  }

  /**
   * Keeps what a test's try found: each image read from the scratch directory through no link
   * (the sandbox wrote it), at most `maxBytes`, stored by its hash, and the findings recorded for
   * the run. Returns notes for the run's summary about images not kept.
   */
  async record(
    run: { id: string; workspaceId: string },
    findings: readonly SnapshotFinding[],
    scratchDir: string,
    maxBytes: number,
  ): Promise<string[]> {
    const notes: string[] = [];
    const kept: VisualFinding[] = [];
    for (const finding of findings) {
      let body: Buffer;
      try {
        body = await readScratchFile(scratchDir, path.relative(scratchDir, finding.file), maxBytes);
      } catch (error) {
        if (!(error instanceof ScratchPathError)) throw error;
        notes.push(`the snapshot "${finding.name.slice(0, 100)}" was not kept: its file ${error.reason}`);
        continue;
      }
      const sha256 = createHash('sha256').update(body).digest('hex');
      const storageKey = baselineKey(run.workspaceId, sha256);
      await storeBaselineImage(this.db, this.store, storageKey, body);
      const { kind, name, contentType } = finding;
      kept.push({
        kind,
        name: name.slice(0, 200),
        path: finding.path,
        sha256,
        storageKey,
        contentType,
        sizeBytes: body.length,
      });
    }
    await recordVisualFindings(this.db, run.id, kept);
    return notes;
  }
}
