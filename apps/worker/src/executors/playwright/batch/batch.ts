// Playwright batches (docs/PLAYWRIGHT.md, "Batches"): the queued Playwright runs of a suite run that
// share a bundle run in one sandbox, in Playwright's order, so a serial group runs as Playwright
// runs it and the sandbox, the runner and Chromium start once, not once a test. Each run keeps its
// own lifecycle: it is claimed when its test begins, and its result is recorded and its status
// written as its test ends (the suite run's counters move as the batch goes).
import { randomUUID } from 'node:crypto';
import { isPlaywrightDefinition, type PlaywrightDefinition } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import { errorMessage } from '@testrun/core/logger';
import { releaseBatch, renewBatch, reserveBatch } from '@testrun/core/runs';
import type { RunListener } from '../../../network/egress-proxy';
import type { SecretMask } from '../../../run/secret-mask';
import { deferred } from './deferred';
import { playwrightTestKey } from '../runner/discover';
import { interruptTest } from '../runner/interrupt';
import type { PlaywrightTestRef, PlaywrightTestResult } from '../runner/types';

type Definition = PlaywrightDefinition['playwright'];

/** How often a batch renews its runs' lease and looks whether any is still live. */
const TICK_MS = 2_000;

/** A run of a batch: its test, and its result once the test has ended (null: it never will). */
export interface BatchMember {
  runId: string;
  test: PlaywrightTestRef;
  result: Promise<PlaywrightTestResult | null>;
  settle: (result: PlaywrightTestResult | null) => void;
  /** When its test began (ms since the epoch); its steps' times count from it. */
  beganAt: number;
  /** Its lifecycle once started (the leader's and a joined run's is the job's own: until its result is recorded). */
  lifecycle: Promise<unknown> | null;
  /** Whether its test has begun (or was reported without a begin). */
  begun: boolean;
  taken: boolean;
}

/** A run its own job brought to the batch (the leader, or a run that joined it, gather.ts): its test, and when its result has been recorded. */
export interface JoinedRun {
  runId: string;
  definition: Definition;
  recorded: Promise<unknown>;
}

/** What a batch needs of the worker: which runs it is, where it runs, how it reaches the network. */
export interface BatchSetup {
  db: Db;
  logger: Logger;
  /** The runs its jobs brought to it, the leader first (gather.ts): one Playwright worker each. */
  running: readonly JoinedRun[];
  /** Starts a member's lifecycle (ReadyAttempt.runMember). */
  runBatched: (runId: string, batchId: string) => Promise<unknown>;
  /** The batch's own way out through the egress proxy (closed when the batch ends). */
  egress: RunListener | undefined;
  /** Every header and secret value the batch's sandbox holds (its leader's): each member's record is masked with it. */
  mask: SecretMask;
}

/** The batches of this worker by member run id: a member's attempt finds its batch here. */
export class BatchRegistry {
  private readonly byRun = new Map<string, PlaywrightBatch>();

  /** The batch holding the run's first attempt; null when there is none (or it was taken). */
  take(runId: string): { batch: PlaywrightBatch; member: BatchMember } | null {
    const batch = this.byRun.get(runId);
    const member = batch?.member(runId);
    if (!batch || !member || member.taken) return null;
    member.taken = true;
    return { batch, member };
  }

  add(batch: PlaywrightBatch): void {
    for (const runId of batch.runIds()) this.byRun.set(runId, batch);
  }

  remove(batch: PlaywrightBatch): void {
    for (const runId of batch.runIds()) if (this.byRun.get(runId) === batch) this.byRun.delete(runId);
  }
}

/**
 * Reserves the leader's batch: the suite run's queued runs that can share its sandbox, shared out
 * between `share` batches and at most `maxRuns`. Returns the members' tests by run id (none: run alone).
 */
export async function reserveMembers(
  db: Db,
  leaderId: string,
  sizing: { share: number; maxRuns: number; joined?: readonly string[] },
): Promise<{ batchId: string; members: Map<string, Definition> } | null> {
  if (sizing.maxRuns < 2) return null;
  const batchId = randomUUID();
  const ids = await reserveBatch(db, { batchId, leaderId, ...sizing });
  if (ids.length === 0) return null;
  const rows = await db.run.findMany({ where: { id: { in: ids } }, select: { id: true, steps: true } });
  const members = new Map<string, Definition>();
  for (const row of rows) if (isPlaywrightDefinition(row.steps)) members.set(row.id, row.steps.playwright);
  return { batchId, members };
}

function refOf(definition: Definition): PlaywrightTestRef {
  return { file: definition.file, project: definition.project, titlePath: definition.titlePath };
}

function newMember(runId: string, definition: Definition): BatchMember {
  const { promise: result, resolve: settle } = deferred<PlaywrightTestResult | null>();
  return {
    runId,
    test: refOf(definition),
    result,
    settle,
    beganAt: Date.now(),
    lifecycle: null,
    begun: false,
    taken: false,
  };
}

/** One batch: its members, the abort of its sandbox, and the lease its ticks renew. */
export class PlaywrightBatch {
  readonly abort = new AbortController();
  private readonly members = new Map<string, BatchMember>();
  private readonly byKey = new Map<string, BatchMember>();
  private readonly tick: NodeJS.Timeout;
  /** Scratch directory of the running sandbox: members read their attachments from it. */
  scratchDir = '';
  /** The sandbox's control directory (runner/interrupt.ts), once it runs. */
  controlDir: string | undefined;
  /** BatchSetup.mask. */
  readonly mask: SecretMask;

  constructor(
    readonly id: string,
    private readonly setup: BatchSetup,
    definitions: ReadonlyMap<string, Definition>,
  ) {
    this.mask = setup.mask;
    const all = new Map([...setup.running.map((r) => [r.runId, r.definition] as const), ...definitions]);
    for (const [runId, definition] of all) {
      const member = newMember(runId, definition);
      const key = playwrightTestKey(member.test);
      if (this.byKey.has(key)) continue;
      this.members.set(runId, member);
      this.byKey.set(key, member);
    }
    for (const run of setup.running) {
      const member = this.members.get(run.runId);
      if (member) member.lifecycle = run.recorded;
    }
    this.tick = setInterval(() => void this.renew(), TICK_MS);
    this.tick.unref();
  }

  runIds(): string[] {
    return [...this.members.keys()];
  }

  member(runId: string): BatchMember | undefined {
    return this.members.get(runId);
  }

  tests(): PlaywrightTestRef[] {
    return [...this.members.values()].map((m) => m.test);
  }

  /** A test began: its run's lifecycle starts (it claims the run; its attempt takes the result). */
  began(key: string): void {
    const member = this.byKey.get(key);
    if (!member || member.begun) return;
    member.begun = true;
    member.beganAt = Date.now();
    if (member.lifecycle) return;
    member.lifecycle = this.setup.runBatched(member.runId, this.id).catch((error: unknown) => {
      this.setup.logger.error('a run of a Playwright batch failed in the worker', {
        runId: member.runId,
        batchId: this.id,
        error: errorMessage(error),
      });
    });
  }

  /** The member's run was cancelled: its test, if the sandbox has not ended it, is stopped there. */
  async interrupt(runId: string): Promise<void> {
    const member = this.members.get(runId);
    if (!member || this.controlDir === undefined) return;
    await interruptTest(this.controlDir, member.test).catch((error: unknown) =>
      this.setup.logger.warn('could not stop a test of a Playwright batch', { runId, error: errorMessage(error) }),
    );
  }

  /** A test ended: its run takes the result (a test reported without a begin, e.g. skipped, begins now). */
  ended(result: PlaywrightTestResult): void {
    this.began(result.key);
    this.byKey.get(result.key)?.settle(result);
  }

  /**
   * Once the sandbox is gone: every member without a result gets none, the members' lifecycles are
   * awaited (they read their attachments from the scratch directory, which goes after this), and the
   * runs that never began are freed for their jobs (the reconciler adds them again).
   */
  async end(): Promise<string[]> {
    clearInterval(this.tick);
    for (const member of this.members.values()) member.settle(null);
    await Promise.all([...this.members.values()].map(async (m) => m.lifecycle));
    this.setup.egress?.close();
    return releaseBatch(this.setup.db, this.id);
  }

  /** Renews the lease; with no live run left (all cancelled or ended), stops the sandbox. */
  private async renew(): Promise<void> {
    try {
      const live = await renewBatch(this.setup.db, this.id);
      if (live === 0) this.abort.abort();
    } catch (error) {
      this.setup.logger.warn('could not renew a Playwright batch lease', {
        batchId: this.id,
        error: errorMessage(error),
      });
    }
  }
}
