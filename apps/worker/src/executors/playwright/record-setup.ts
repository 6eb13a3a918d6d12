// The setup tests a sandbox ran before its selected tests (their projects' `dependencies`), recorded
// for the suite run whose runs it ran, or for the run outside a suite run it ran (docs/PLAYWRIGHT.md,
// "Setup projects"): their outcome and steps, masked like a run's, and the evidence of the execution
// each entry shows (Playwright's screenshot, trace and video, what the test attached), kept within a
// run's caps as a run's are (store-attachments.ts).
import { randomUUID } from 'node:crypto';
import type { ArtifactKind } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import { errorMessage } from '@testrun/core/logger';
import {
  dropHiddenSetupArtifacts,
  insertSetupArtifacts,
  recordSetupResult,
  type SetupArtifactRow,
  type SetupResultInput,
} from '@testrun/core/runs';
import type { ArtifactWriter } from '../../run/artifact-writer';
import type { RunLimits } from '../../run/run-limits';
import type { SecretMask } from '../../run/secret-mask';
import { outcomeOf, stepRows } from './record-result';
import { attachmentBudget, storeAttachments } from './store-attachments';
import type { SetupTestResult } from './runner/types';

/** What a setup test's record belongs to: the suite run of the sandbox's runs, else the run it ran alone. */
export interface SetupOwner {
  workspaceId: string;
  suiteRunId: string | null;
  /** The run whose sandbox it is (the batch's leader): the entry's owner outside a suite run, and its files' prefix. */
  runId: string;
  /** The config's rootDir relative to the bundle (the runs' definition's), which reports name files from. */
  rootDir?: string;
}

/** Where a setup test's evidence is read from and kept: the sandbox's scratch directory, the run's writer and caps. */
export interface SetupEvidence {
  scratchDir: string;
  writer: Pick<ArtifactWriter, 'storeFile' | 'deleteFiles'>;
  limits: Pick<RunLimits, 'maxAttachments' | 'maxRecordingBytes'>;
}

/** One execution of a setup test as its owner's record, every text masked. */
function setupInput(owner: SetupOwner, setup: SetupTestResult, mask: SecretMask): SetupResultInput {
  const outcome = outcomeOf(setup, mask);
  const startedAt = setup.endedAt - setup.durationMs;
  const rows = stepRows(setup, startedAt, mask);
  // A failed setup's failing step: the last with an error (as a failed run's `failure`).
  const failing = outcome.status === 'failed' ? rows.findLast((row) => row.error !== null) : undefined;
  const { rootDir, workspaceId, suiteRunId, runId } = owner;
  return {
    workspaceId,
    suiteRunId,
    runId: suiteRunId === null ? runId : null,
    executionId: randomUUID(),
    key: setup.key,
    name: mask.text(setup.name),
    location: {
      ...setup.ref,
      titlePath: setup.ref.titlePath.map((title) => mask.text(title)),
      ...(rootDir ? { rootDir } : {}),
    },
    status: outcome.status,
    outcomeCode: outcome.status === 'failed' || outcome.status === 'error' ? (outcome.code ?? null) : null,
    outcomeMessage: outcome.status === 'failed' || outcome.status === 'error' ? (outcome.message ?? null) : null,
    resultSummary: outcome.resultSummary,
    failure: failing?.error
      ? { message: failing.error, expected: null, received: null, location: failing.location }
      : null,
    steps: rows.map((row) => ({
      category: row.category,
      depth: row.depth,
      label: row.label,
      location: row.location,
      outcome: row.outcome === 'failed' ? 'failed' : row.outcome === 'error' ? 'error' : 'passed',
      error: row.error,
      durationMs: Math.max(0, Math.round(row.durationMs)),
    })),
    durationMs: setup.durationMs,
    startedAt: new Date(startedAt),
    finishedAt: new Date(setup.endedAt),
  };
}

type KeptFile = { kind: ArtifactKind; name: string; contentType: string; body: Buffer };

/**
 * Records a sandbox's setup tests as each ends (RunPlaywrightOptions.onSetup); `settled` waits for
 * the writes, which read the setup tests' files: the sandbox's scratch directory must outlive it. A
 * write that fails is logged: the runs' own results do not depend on it.
 */
export class SetupRecorder {
  private readonly pending: Promise<void>[] = [];

  constructor(
    private readonly db: Db,
    private readonly owner: SetupOwner,
    private readonly mask: SecretMask,
    private readonly logger: Logger,
    private readonly evidence: SetupEvidence,
  ) {}

  readonly record = (setup: SetupTestResult): void => {
    const input = setupInput(this.owner, setup, this.mask);
    this.pending.push(
      this.write(input, setup).catch((error: unknown) => {
        const { suiteRunId, runId } = this.owner;
        this.logger.warn('could not record a setup test', { suiteRunId, runId, error: errorMessage(error) });
      }),
    );
  };

  /** Records the execution; when its entry shows it, keeps its evidence and drops that of the one it replaced. */
  private async write(input: SetupResultInput, setup: SetupTestResult): Promise<void> {
    const entry = await recordSetupResult(this.db, input);
    if (!entry.shown) return;
    const files: KeptFile[] = [];
    const { scratchDir, limits, writer } = this.evidence;
    const notes = await storeAttachments(
      { recordRunFile: (kind, name, contentType, body) => files.push({ kind, name, contentType, body }) },
      setup,
      { scratchDir, mask: this.mask, maxFileBytes: limits.maxRecordingBytes, budget: attachmentBudget(limits) },
    );
    if (notes.length > 0) this.logger.info('setup test files not kept', { setupResultId: entry.id, notes });
    const rows: SetupArtifactRow[] = [];
    for (const file of files) {
      const { id, storageKey } = await writer.storeFile(file.name, file.body);
      rows.push({
        id,
        workspaceId: this.owner.workspaceId,
        setupResultId: entry.id,
        runId: this.owner.runId,
        executionId: input.executionId,
        kind: file.kind,
        name: file.name,
        storageKey,
        contentType: file.contentType,
        sizeBytes: file.body.length,
      });
    }
    await insertSetupArtifacts(this.db, rows);
    await writer.deleteFiles(await dropHiddenSetupArtifacts(this.db, entry.id));
  }

  async settled(): Promise<void> {
    await Promise.all(this.pending);
  }
}
