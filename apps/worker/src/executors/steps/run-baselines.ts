import { createHash } from 'node:crypto';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { errorMessage } from '@testrun/core/logger';
import type { RunOutcome } from '@testrun/core/runs';
import {
  baselineKey,
  baselinesForRun,
  isStepBaselinePath,
  recordVisualFindings,
  storeBaselineImage,
  stepBaselinePath,
  stepRunScope,
  type BaselineFile,
  type StepTestName,
  type VisualFinding,
} from '@testrun/core/visual';
import type { ArtifactWriter } from '../../run/artifact-writer';
import type { Retrying } from '../../run/claim';
import type { RunLimits } from '../../run/run-limits';
import { internalError, invalidDefinition } from './step-failure';
import type { StepBaseline, StepVisuals } from './types';

// The baselines of one attempt of a step test (docs/VISUAL.md, "Step tests"): read at its first
// `expectScreenshot` (one query for the run's test and deployment, one for its baselines: those of
// the run's deployment, else the active one's), each image fetched from the store when a step
// compares with it. What the steps find is held until the attempt ends, then kept: the images stored
// once per workspace by their hash, the findings recorded in one transaction, nothing for a match.

/** What an attempt's baselines are read from and kept with. */
export interface RunBaselinesIo {
  db: Db;
  store: ArtifactStore;
  run: { id: string; workspaceId: string };
  /** The attempt's writer: the images of a finding are the run's attachments. */
  writer: Pick<ArtifactWriter, 'recordRunFile'>;
  /** Tries a write again while Postgres or the store is briefly unavailable. */
  retry: Retrying;
  /** The files and bytes of images the run keeps as attachments. */
  limits: Pick<RunLimits, 'maxAttachments' | 'maxRecordingBytes'>;
}

type Loaded = { test: StepTestName; files: ReadonlyMap<string, BaselineFile> };
type Found = { kind: 'new' | 'changed'; name: string; path: string; body: Buffer };

/** An attempt's baselines and what its `expectScreenshot` steps found. */
export class RunBaselines implements StepVisuals {
  private loaded: Promise<Loaded> | null = null;
  /** Images this attempt made baselines of: a name compared again later in the test compares with them. */
  private readonly taken = new Map<string, Buffer>();
  private readonly found = new Map<string, Found>();
  private readonly attached = { files: 0, bytes: 0 };
  private notKept: string[] = [];

  constructor(private readonly io: RunBaselinesIo) {}

  async baseline(name: string): Promise<StepBaseline> {
    const { test, files } = await (this.loaded ??= this.load());
    const path = stepBaselinePath(test, name);
    const file = `${name}.png`;
    const taken = this.taken.get(path);
    if (taken) return { name: file, path, expected: taken };
    const stored = files.get(path);
    // An image gone from the store compares as missing, as a Playwright snapshot's does.
    const expected = stored ? await this.io.store.get(stored.storageKey) : null;
    return { name: file, path, expected };
  }

  keepNew(baseline: StepBaseline, actual: Buffer): void {
    this.taken.set(baseline.path, actual);
    this.found.set(baseline.path, { kind: 'new', name: baseline.name, path: baseline.path, body: actual });
    this.attach(baseline.name, [['actual', actual]]);
  }

  keepChanged(baseline: StepBaseline, found: { actual: Buffer; diff: Buffer | null }): void {
    // Against an image this attempt took itself, the first one stays what it found: the new baseline.
    if (this.found.get(baseline.path)?.kind !== 'new')
      this.found.set(baseline.path, { kind: 'changed', name: baseline.name, path: baseline.path, body: found.actual });
    this.attach(baseline.name, [
      ['expected', baseline.expected],
      ['actual', found.actual],
      ['diff', found.diff],
    ]);
  }

  /**
   * Keeps what the attempt found and says so in its outcome: a passing run that made baselines
   * passes `Passed; new baselines awaiting approval: …`, as a Playwright test does.
   */
  async finish(outcome: RunOutcome): Promise<RunOutcome> {
    if (this.found.size === 0) return this.withNotes(outcome);
    const findings: VisualFinding[] = [];
    for (const f of this.found.values()) {
      const sha256 = createHash('sha256').update(f.body).digest('hex');
      const storageKey = baselineKey(this.io.run.workspaceId, sha256);
      await this.io.retry(() => storeBaselineImage(this.io.db, this.io.store, storageKey, f.body));
      findings.push({
        kind: f.kind,
        name: f.name,
        path: f.path,
        sha256,
        storageKey,
        contentType: 'image/png',
        sizeBytes: f.body.length,
      });
    }
    await this.io.retry(() => recordVisualFindings(this.io.db, this.io.run.id, findings));
    const fresh = findings.filter((f) => f.kind === 'new').map((f) => f.name);
    const summed =
      outcome.status === 'passed' && fresh.length > 0
        ? { ...outcome, resultSummary: newBaselinesSummary(fresh) }
        : outcome;
    return this.withNotes(summed);
  }

  private async load(): Promise<Loaded> {
    let read;
    try {
      read = await Promise.all([stepRunScope(this.io.db, this.io.run.id), baselinesForRun(this.io.db, this.io.run.id)]);
    } catch (error) {
      throw internalError(`the run's baselines could not be read: ${errorMessage(error)}`);
    }
    const [scope, files] = read;
    if (!scope) throw internalError(`run ${this.io.run.id} is gone`);
    if (scope.deploymentId === null)
      throw invalidDefinition(
        'expectScreenshot compares with the baselines of the deployment a run executes, and this run executes none (its project was set up before deployments): deploy the project and run the test again',
      );
    const own = files.filter((f) => isStepBaselinePath(f.path));
    return { test: scope, files: new Map(own.map((f) => [f.path, f])) };
  }

  /** Keeps a finding's images as the run's attachments (`home-expected.png`…), within the run's limits. */
  private attach(name: string, images: ReadonlyArray<readonly [string, Buffer | null]>): void {
    const stem = name.replace(/\.png$/, '');
    for (const [role, body] of images) {
      if (body === null) continue;
      const { maxAttachments, maxRecordingBytes } = this.io.limits;
      if (this.attached.files + 1 > maxAttachments || this.attached.bytes + body.length > maxRecordingBytes) {
        this.notKept.push(`${stem}-${role}.png`);
        continue;
      }
      this.attached.files += 1;
      this.attached.bytes += body.length;
      this.io.writer.recordRunFile('attachment', `${stem}-${role}.png`, 'image/png', body);
    }
  }

  private withNotes(outcome: RunOutcome): RunOutcome {
    if (this.notKept.length === 0) return outcome;
    const { maxAttachments, maxRecordingBytes } = this.io.limits;
    const listed =
      this.notKept.slice(0, 3).join(', ') + (this.notKept.length > 3 ? ` and ${this.notKept.length - 3} more` : '');
    const note = `Images not kept (over the run's ${maxAttachments} files or ${Math.round(maxRecordingBytes / (1024 * 1024))} MB of images): ${listed}.`;
    this.notKept = [];
    return { ...outcome, resultSummary: `${outcome.resultSummary} ${note}` };
  }
}

/** A passing test's summary when it made baselines: the Playwright executor's words (runner/snapshots.ts). */
export function newBaselinesSummary(names: readonly string[]): string {
  const listed = names.slice(0, 5).join(', ') + (names.length > 5 ? ` and ${names.length - 5} more` : '');
  return `Passed; new baseline${names.length === 1 ? '' : 's'} awaiting approval: ${listed}`;
}
