import type { ArtifactKind, Step } from '@testrun/contracts';
import { artifactKey, type ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { insertStepRows, type ArtifactRow } from '@testrun/core/runs';
import type { PageEvent } from '../browser/page-events';
import { describeStep, describeTarget } from './describe-step';
import { truncate } from '../support/text-format';
import type { StepOutcomeResult, StepShot } from './step-outcome';

/** The page as it was when a step went wrong, for the view. */
export type PageAtFailure = { url: string; title: string };

/** Expected and received values are kept up to this length (the view diffs them). */
const MAX_COMPARED = 10_000;

/** The run and attempt whose rows and files an {@link ArtifactWriter} writes. */
export type ArtifactOwner = { runId: string; workspaceId: string; attempt: number };

/**
 * The only writer of a run's step rows, artifact files and artifact rows. Writes happen off the
 * run's critical path, while the browser goes on with the next step; they are independent of each
 * other (a step row carries its own screenshot's id), so they run side by side. flush() waits for
 * all of them and rethrows the first failure.
 */
/** One step of a Playwright test as a step row: no step-language action, a category and depth instead. */
export type TreeStepRow = {
  category: string;
  depth: number;
  label: string;
  target: string;
  location: string | null;
  outcome: 'passed' | 'failed' | 'error' | 'skipped';
  error: string | null;
  startedAt: Date;
  durationMs: number;
};

export class ArtifactWriter {
  private readonly pending: Array<Promise<void>> = [];
  private failure: { error: unknown } | null = null;
  /** Rows of stored trace and video files, to record with the run's terminal state (finishRun). */
  readonly finalRows: ArtifactRow[] = [];

  /**
   * `retrying` runs each database write and artifact file write, trying it again while Postgres or
   * the artifact store is briefly unavailable (see retry-write.ts); by default a write is tried once.
   */
  constructor(
    private readonly db: Db,
    private readonly store: ArtifactStore,
    readonly owner: ArtifactOwner,
    private readonly retrying: <T>(write: () => Promise<T>) => Promise<T> = (write) => write(),
  ) {}

  private enqueue(write: () => Promise<void>): void {
    this.pending.push(
      write().catch((error: unknown) => {
        this.failure ??= { error };
      }),
    );
  }

  /**
   * Records a step that ran (1-based `index`) with the image taken after it and, for a step that did
   * not pass, the page as it was then.
   */
  recordStep(
    index: number,
    step: Step,
    result: StepOutcomeResult,
    shot: StepShot | null,
    page: PageAtFailure | null = null,
  ): void {
    const comparison = result.outcome === 'failed' ? result.comparison : undefined;
    this.enqueue(async () => {
      const screenshotId = shot ? await this.storeScreenshot(index, shot) : null;
      await this.retrying(() =>
        insertStepRows(this.db, [
          {
            id: newId(ID_PREFIX.step),
            runId: this.owner.runId,
            attempt: this.owner.attempt,
            index,
            action: step.action,
            label: describeStep(step),
            target: result.target,
            outcome: result.outcome,
            error: result.outcome === 'passed' ? null : result.message,
            startedAt: result.startedAt,
            durationMs: Math.max(0, Math.round(result.durationMs)),
            screenshotId,
            expected: comparison ? truncate(comparison.expected, MAX_COMPARED) : null,
            received: comparison ? truncate(comparison.received, MAX_COMPARED) : null,
            pageUrl: page?.url ?? null,
            pageTitle: page?.title ?? null,
          },
        ]),
      );
    });
  }

  /** Records a Playwright test's steps, its step tree flattened depth first (see TreeStepRow). */
  recordTreeSteps(rows: readonly TreeStepRow[]): void {
    if (rows.length === 0) return;
    this.enqueue(async () => {
      await this.retrying(() =>
        insertStepRows(
          this.db,
          rows.map((row, i) => ({
            id: newId(ID_PREFIX.step),
            runId: this.owner.runId,
            attempt: this.owner.attempt,
            index: i + 1,
            ...row,
            durationMs: Math.max(0, Math.round(row.durationMs)),
          })),
        ),
      );
    });
  }

  /** Records what the run's pages reported (console errors, exceptions, failed requests), masked by the caller. */
  recordPageEvents(events: readonly PageEvent[]): void {
    if (events.length === 0) return;
    this.enqueue(async () => {
      await this.retrying(() =>
        this.db.pageEvent.createMany({
          data: events.map((e) => ({
            id: newId(ID_PREFIX.pageEvent),
            runId: this.owner.runId,
            attempt: this.owner.attempt,
            ...e,
          })),
        }),
      );
    });
  }

  /** Steps after the one that did not pass are not run; they are listed as skipped so the timeline is whole. */
  recordSkipped(steps: readonly Step[], lastRun: number, baseUrl: string): void {
    if (lastRun >= steps.length) return;
    const now = new Date();
    this.enqueue(async () => {
      await this.retrying(() =>
        insertStepRows(
          this.db,
          steps.slice(lastRun).map((step, offset) => ({
            id: newId(ID_PREFIX.step),
            runId: this.owner.runId,
            attempt: this.owner.attempt,
            index: lastRun + offset + 1,
            action: step.action,
            label: describeStep(step),
            target: safeTarget(step, baseUrl),
            outcome: 'skipped' as const,
            error: null,
            startedAt: now,
            durationMs: 0,
          })),
        ),
      );
    });
  }

  /**
   * Stores a trace or video file now; its row waits for the run's terminal write (`finalRows`),
   * which records it in the same statement, saving a commit on the run's critical path.
   */
  recordRunFile(kind: ArtifactKind, name: string, contentType: string, body: Buffer): void {
    this.enqueue(async () => {
      const { id, storageKey } = await this.put(name, body);
      this.finalRows.push({
        id,
        run_id: this.owner.runId,
        workspace_id: this.owner.workspaceId,
        attempt: this.owner.attempt,
        kind,
        step_index: null,
        name,
        storage_key: storageKey,
        content_type: contentType,
        size_bytes: body.length,
      });
    });
  }

  /**
   * Stores a file under the run's key prefix now, whose row the caller writes (a setup test's
   * evidence, record-setup.ts): retention deletes it with the run's other files.
   */
  storeFile(name: string, body: Buffer): Promise<{ id: string; storageKey: string }> {
    return this.put(name, body);
  }

  /** Deletes stored files by their keys (a setup test's evidence of an execution no longer shown). */
  async deleteFiles(storageKeys: readonly string[]): Promise<void> {
    for (const key of storageKeys) await this.retrying(() => this.store.deletePrefix(key));
  }

  /** Waits for every write; throws the first that failed. */
  async flush(): Promise<void> {
    await Promise.all(this.pending);
    if (this.failure) throw this.failure.error;
  }

  private async storeScreenshot(stepIndex: number, shot: StepShot): Promise<string> {
    const { id, storageKey } = await this.put(shot.name, shot.body);
    await this.retrying(() =>
      this.db.artifact.create({
        data: {
          id,
          runId: this.owner.runId,
          workspaceId: this.owner.workspaceId,
          attempt: this.owner.attempt,
          kind: 'screenshot',
          stepIndex,
          name: shot.name,
          storageKey,
          contentType: shot.contentType,
          sizeBytes: shot.body.length,
        },
      }),
    );
    return id;
  }

  private async put(name: string, body: Buffer): Promise<{ id: string; storageKey: string }> {
    const id = newId(ID_PREFIX.artifact);
    // The file's name in the store: the kept name (an attachment's is the test's) cut to what a key may hold.
    const file =
      name
        .replace(/[^A-Za-z0-9._-]/g, '_')
        .replace(/\.\.+/g, '_')
        .slice(0, 100) || 'file';
    const storageKey = artifactKey(this.owner.workspaceId, this.owner.runId, id, file);
    await this.retrying(() => this.store.put(storageKey, body));
    return { id, storageKey };
  }
}

function safeTarget(step: Step, baseUrl: string): string {
  try {
    return describeTarget(step, baseUrl);
  } catch {
    return step.action;
  }
}
