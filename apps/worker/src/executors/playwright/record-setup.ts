// The setup tests a sandbox ran before its selected tests (their projects' `dependencies`), recorded
// for the suite run whose runs it ran (docs/PLAYWRIGHT.md, "Setup projects"): their outcome and
// steps, masked like a run's. A run outside a suite run keeps none.
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import { errorMessage } from '@testrun/core/logger';
import { recordSetupResult, type SetupResultInput } from '@testrun/core/runs';
import type { SecretMask } from '../../run/secret-mask';
import { outcomeOf, stepRows } from './record-result';
import type { SetupTestResult } from './types';

/** What a setup test's record belongs to: the suite run of the sandbox's runs (none: nothing is kept). */
export interface SetupOwner {
  workspaceId: string;
  suiteRunId: string | null;
  /** The config's rootDir relative to the bundle (the runs' definition's), which reports name files from. */
  rootDir?: string;
}

/** One execution of a setup test as its suite run's record, every text masked. */
function setupInput(
  owner: { workspaceId: string; suiteRunId: string; rootDir?: string },
  setup: SetupTestResult,
  mask: SecretMask,
): SetupResultInput {
  const outcome = outcomeOf(setup, mask);
  const startedAt = setup.endedAt - setup.durationMs;
  const rows = stepRows(setup, startedAt, mask);
  // A failed setup's failing step: the last with an error (as a failed run's `failure`).
  const failing = outcome.status === 'failed' ? rows.findLast((row) => row.error !== null) : undefined;
  const { rootDir, ...ids } = owner;
  return {
    ...ids,
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

/**
 * Records a sandbox's setup tests as each ends (RunPlaywrightOptions.onSetup); `settled` waits for
 * the writes. A write that fails is logged: the runs' own results do not depend on it.
 */
export class SetupRecorder {
  private readonly pending: Promise<void>[] = [];

  constructor(
    private readonly db: Db,
    private readonly owner: SetupOwner,
    private readonly mask: SecretMask,
    private readonly logger: Logger,
  ) {}

  readonly record = (setup: SetupTestResult): void => {
    const { suiteRunId } = this.owner;
    if (suiteRunId === null) return;
    const input = setupInput({ ...this.owner, suiteRunId }, setup, this.mask);
    this.pending.push(
      recordSetupResult(this.db, input).catch((error: unknown) => {
        this.logger.warn('could not record a setup test', { suiteRunId, error: errorMessage(error) });
      }),
    );
  };

  async settled(): Promise<void> {
    await Promise.all(this.pending);
  }
}
