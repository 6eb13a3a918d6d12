import { mkdtemp, readFile, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright';
import { compileValidator, JOBS, StepSchema, type Step, type TerminalRunStatus } from '@testrun/contracts';
import {
  abortRun,
  artifactKey,
  finishRun,
  ID_PREFIX,
  newId,
  openHeaders,
  startRun,
  type ArtifactRow,
  type ClaimedRun,
  type ArtifactStore,
  type Db,
  type Logger,
} from '@testrun/core';
import {
  captureScreenshot,
  describeStep,
  describeTarget,
  executeStep,
  summarizeFailure,
  summarizePass,
  type StepOutcomeResult,
} from './steps';
import { routeTargetHeaders } from './target-headers';
import { sanitizeTrace } from './trace-sanitizer';

/** A run is started at most this many times: the first try plus one retry after its worker was lost. */
export const MAX_RUN_ATTEMPTS = JOBS.run.maxStalledCount + 1;

/** Where browser contexts come from: the process's warm browser (see BrowserPool). */
export interface ContextSource {
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
}

/** What executeRun needs. */
export interface RunDeps {
  db: Db;
  store: ArtifactStore;
  browser: ContextSource;
  /** Key that opens the runs' sealed headers (`deriveKeys(secret).headers`). */
  headersKey: Buffer;
  logger: Logger;
  /** Record a video of each run (needs Playwright's ffmpeg). Default false. */
  recordVideo?: boolean;
  /** Longest the teardown (trace, context close, video) may take before it is abandoned. Default 15000 ms. */
  teardownTimeoutMs?: number;
}

/** How a call of executeRun ended, for the caller's log and for benchmarks. */
export type RunExecution =
  | { kind: 'finished'; status: TerminalRunStatus; attempt: number; recorded: boolean; timings: RunTimings }
  | { kind: 'not_runnable'; reason: 'missing' | 'terminal' | 'out_of_attempts' };

/** Where the time of one run went: `browserMs` is time spent awaiting Playwright. */
export type RunTimings = { totalMs: number; browserMs: number };

const validateStep = compileValidator(StepSchema);

/** Measures how long the run waits on the browser, to tell the service's own overhead apart. */
class BrowserClock {
  browserMs = 0;
  async time<T>(work: Promise<T> | (() => Promise<T>)): Promise<T> {
    const began = performance.now();
    try {
      return await (typeof work === 'function' ? work() : work);
    } finally {
      this.browserMs += performance.now() - began;
    }
  }
}

type Outcome = {
  status: TerminalRunStatus;
  resultSummary: string;
  code?: string;
  message?: string;
  step?: number;
};

type RunRecord = Omit<ClaimedRun, 'attempt' | 'prevStatus'>;

/**
 * Executes one run end to end: claims it (`startRun`), runs its steps in a fresh browser context,
 * records every step, screenshot, the trace and the video, then writes the terminal state
 * (`finishRun`). Never leaves the run non-terminal for a fault of its own: anything unexpected ends
 * it `error`/`internal_error`. Throws only when Postgres itself cannot be written, so that the job
 * fails and the reconciler takes over.
 */
export async function executeRun(deps: RunDeps, runId: string): Promise<RunExecution> {
  const began = performance.now();
  const log = deps.logger.child({ runId });
  // One statement claims the run, moves its suite counters and returns the snapshot to execute.
  const claim = await startRun(deps.db, runId, MAX_RUN_ATTEMPTS);
  const claimed = claim && { attempt: claim.attempt, run: claim satisfies RunRecord };
  if (!claimed) return endUnclaimable(deps, runId, log);
  const { attempt, run } = claimed;
  const clock = new BrowserClock();
  log.info('run started', { attempt, workspaceId: run.workspaceId });

  const writer = new ArtifactWriter(deps, run, attempt);
  let outcome: Outcome;
  try {
    outcome = await runSteps(deps, run, attempt, clock, writer);
  } catch (error) {
    log.error('run failed inside the worker', { attempt, error: errorMessage(error) });
    outcome = {
      status: 'error',
      code: 'internal_error',
      message: `the worker hit an unexpected problem: ${errorMessage(error)}`,
      resultSummary: 'Error: the worker hit an unexpected problem and could not complete the run.',
    };
  }
  const recorded = await finishRun(
    deps.db,
    runId,
    attempt,
    {
      ...outcome,
      code: outcome.code ?? null,
      message: outcome.message ?? null,
      step: outcome.step ?? null,
    },
    writer.finalRows,
  );
  const timings = { totalMs: performance.now() - began, browserMs: clock.browserMs };
  if (recorded)
    log.info('run finished', {
      attempt,
      status: outcome.status,
      code: outcome.code,
      durationMs: Math.round(timings.totalMs),
    });
  else
    log.warn('run outcome not recorded: the run was ended or taken over meanwhile', {
      attempt,
      status: outcome.status,
    });
  return { kind: 'finished', status: outcome.status, attempt, recorded, timings };
}

/** startRun refused: the run is gone, already terminal, or out of attempts (then it ends worker_lost). */
async function endUnclaimable(deps: RunDeps, runId: string, log: Logger): Promise<RunExecution> {
  const run = await deps.db.run.findUnique({ where: { id: runId }, select: { status: true, attempt: true } });
  if (!run) {
    log.warn('job for a run that does not exist');
    return { kind: 'not_runnable', reason: 'missing' };
  }
  if (run.status !== 'queued' && run.status !== 'running') return { kind: 'not_runnable', reason: 'terminal' };
  const ended = await abortRun(deps.db, runId, workerLostOutcome(run.attempt));
  if (ended) log.warn('run ended: its worker was lost on every attempt', { attempt: run.attempt });
  return { kind: 'not_runnable', reason: 'out_of_attempts' };
}

/** The terminal state of a run whose worker died on its last allowed attempt. */
export function workerLostOutcome(attempts: number) {
  return {
    code: 'worker_lost',
    message: `the worker running this test stopped responding (attempt ${attempts} of ${MAX_RUN_ATTEMPTS}); it was not retried again`,
    resultSummary: `Error: the worker running this test was lost ${attempts === 1 ? 'once' : `${attempts} times`}; the run was not retried again.`,
  };
}

/** Checks a run's step snapshot; the first problem, as `step N: reason`, or null when every step is valid. */
export function findDefinitionProblem(steps: unknown): string | null {
  if (!Array.isArray(steps) || steps.length === 0) return 'the test has no steps';
  for (let i = 0; i < steps.length; i++) {
    const checked = validateStep(steps[i]);
    if (!checked.ok) {
      const first = checked.errors[0];
      const where = first?.path ? ` (${first.path.replace(/^\//, '')})` : '';
      return `step ${i + 1}${where}: ${first?.message ?? 'is invalid'}`;
    }
  }
  return null;
}

async function runSteps(
  deps: RunDeps,
  run: RunRecord,
  attempt: number,
  clock: BrowserClock,
  writer: ArtifactWriter,
): Promise<Outcome> {
  const started = Date.now();
  const deadline = started + run.timeoutMs;
  const problem = findDefinitionProblem(run.steps);
  if (problem) {
    return {
      status: 'error',
      code: 'invalid_definition',
      message: problem,
      resultSummary: `Error: the test definition is invalid (${problem}).`,
    };
  }
  const steps = run.steps as Step[];

  let headers: Record<string, string> = {};
  if (run.headersSealed) {
    try {
      headers = openHeaders(deps.headersKey, run.id, run.headersSealed);
    } catch {
      return {
        status: 'error',
        code: 'internal_error',
        message:
          "the run's request headers could not be decrypted (is TESTRUN_SECRET the same for the API and the worker?)",
        resultSummary: "Error: the run's request headers could not be decrypted.",
      };
    }
  }

  const videoDir = deps.recordVideo ? await scratchDir() : null;
  let context: BrowserContext;
  try {
    context = await clock.time(
      deps.browser.newContext({
        viewport: { width: 1280, height: 720 },
        ...(videoDir ? { recordVideo: { dir: videoDir, size: { width: 800, height: 450 } } } : {}),
      }),
    );
  } catch (error) {
    return {
      status: 'error',
      code: 'browser_crashed',
      message: `the browser could not open a context: ${errorMessage(error)}`,
      resultSummary: 'Error: the browser could not be started for this run.',
    };
  }

  let page: Page | null = null;
  let outcome: Outcome | null = null;
  try {
    await clock.time(context.tracing.start({ screenshots: true, snapshots: true }));
    await routeTargetHeaders(context, run.baseUrl, headers);
    page = await clock.time(context.newPage());
    const ctx = { baseUrl: run.baseUrl, deadline, budgetMs: run.timeoutMs };
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i]!;
      const result: StepOutcomeResult = await clock.time(executeStep(page, step, ctx));
      let shot: { body: Buffer; contentType: string; name: string } | null = null;
      if (result.effect?.kind === 'screenshot') {
        shot = {
          body: result.effect.body,
          contentType: result.effect.contentType,
          name: `${safeName(result.effect.name ?? `step-${i + 1}`)}.png`,
        };
      } else {
        const body = await clock.time(
          captureScreenshot(page, { timeoutMs: Math.min(3_000, Math.max(500, deadline + 2_000 - Date.now())) }),
        );
        if (body) shot = { body, contentType: 'image/jpeg', name: `step-${i + 1}.jpg` };
      }
      writer.recordStep(i + 1, step, result, shot);
      if (result.outcome !== 'passed') {
        writer.recordSkipped(steps, i + 1, run.baseUrl);
        outcome = {
          status: result.outcome,
          code: result.code,
          message: result.message,
          step: i + 1,
          resultSummary: summarizeFailure(i + 1, step, result),
        };
        break;
      }
    }
    outcome ??= { status: 'passed', resultSummary: summarizePass(steps.length, Date.now() - started) };
  } finally {
    await teardown(deps, context, page, videoDir, headers, writer, clock);
    headers = {};
  }
  // Step rows and artifacts are written in the background while the browser works; all must be
  // stored before the run is declared finished.
  await writer.flush();
  return outcome;
}

/** Stops tracing, closes the context (which finishes the video) and stores both, within a bound. */
async function teardown(
  deps: RunDeps,
  context: BrowserContext,
  page: Page | null,
  videoDir: string | null,
  headers: Record<string, string>,
  writer: ArtifactWriter,
  clock: BrowserClock,
): Promise<void> {
  const bound = deps.teardownTimeoutMs ?? 15_000;
  const tracePath = path.join(await scratchDir(), `${writer.runId}-${writer.attempt}-trace.zip`);
  const scratchFiles = [tracePath];
  try {
    const traced = await clock.time(withTimeout(context.tracing.stop({ path: tracePath }), bound));
    if (traced !== TIMED_OUT) {
      let zip: Buffer = await readFile(tracePath);
      // The headers' values must never reach storage, whatever Playwright chose to record.
      if (Object.keys(headers).length > 0) zip = sanitizeTrace(zip, headers);
      writer.recordArtifact('trace', null, 'trace.zip', 'application/zip', zip);
    } else {
      deps.logger.warn('trace not stored: stopping it took too long', { runId: writer.runId });
    }
  } catch (error) {
    deps.logger.warn('trace not stored', { runId: writer.runId, error: errorMessage(error) });
  }
  const video = page?.video() ?? null;
  await clock.time(
    withTimeout(
      context.close().catch(() => undefined),
      bound,
    ),
  );
  if (video && videoDir) {
    try {
      const videoPath = await clock.time(withTimeout(video.path(), 1_000));
      if (videoPath !== TIMED_OUT) {
        scratchFiles.push(videoPath);
        const body = await readFile(videoPath);
        if (body.length > 0) writer.recordArtifact('video', null, 'video.webm', 'video/webm', body);
      }
    } catch (error) {
      deps.logger.warn('video not stored', { runId: writer.runId, error: errorMessage(error) });
    }
  }
  // The files were read into memory: removing them need not hold up the run's terminal write.
  void Promise.all(scratchFiles.map((file) => unlink(file).catch(() => undefined)));
}

let scratch: Promise<string> | null = null;

/**
 * One scratch directory per worker process for traces and videos on their way to the artifact
 * store; files in it are named per run, so no directory is made or removed per run.
 */
function scratchDir(): Promise<string> {
  scratch ??= mkdtemp(path.join(os.tmpdir(), 'testrun-worker-'));
  return scratch;
}

/**
 * Writes step rows and artifacts off the run's critical path, while the browser goes on with the
 * next step. Writes are independent of each other (a step row carries its own screenshot's id), so
 * they run side by side; flush() waits for all of them and rethrows the first failure.
 */
class ArtifactWriter {
  private pending: Array<Promise<void>> = [];
  /** Rows of stored artifacts to record with the run's terminal state. */
  readonly finalRows: ArtifactRow[] = [];
  private failure: unknown = null;
  readonly runId: string;

  constructor(
    private readonly deps: RunDeps,
    private readonly run: RunRecord,
    readonly attempt: number,
  ) {
    this.runId = run.id;
  }

  private enqueue(write: () => Promise<void>): void {
    this.pending.push(
      write().catch((error) => {
        this.failure ??= error;
      }),
    );
  }

  recordStep(
    index: number,
    step: Step,
    result: StepOutcomeResult,
    shot: { body: Buffer; contentType: string; name: string } | null,
  ): void {
    this.enqueue(async () => {
      const screenshotId = shot
        ? await this.storeArtifact('screenshot', index, shot.name, shot.contentType, shot.body)
        : null;
      await this.deps.db.stepResult.create({
        data: {
          id: newId(ID_PREFIX.step),
          runId: this.run.id,
          attempt: this.attempt,
          index,
          action: step.action,
          label: describeStep(step),
          target: result.target,
          outcome: result.outcome,
          error: result.outcome === 'passed' ? null : result.message,
          startedAt: result.startedAt,
          durationMs: Math.max(0, Math.round(result.durationMs)),
          screenshotId,
        },
      });
    });
  }

  /** Steps after the one that did not pass are not run; they are listed as skipped so the timeline is whole. */
  recordSkipped(steps: Step[], lastRun: number, baseUrl: string): void {
    if (lastRun >= steps.length) return;
    const now = new Date();
    this.enqueue(async () => {
      await this.deps.db.stepResult.createMany({
        data: steps.slice(lastRun).map((step, offset) => ({
          id: newId(ID_PREFIX.step),
          runId: this.run.id,
          attempt: this.attempt,
          index: lastRun + offset + 1,
          action: step.action,
          label: describeStep(step),
          target: safeTarget(step, baseUrl),
          outcome: 'skipped',
          error: null,
          startedAt: now,
          durationMs: 0,
        })),
      });
    });
  }

  /**
   * Stores a trace or video file now; its row waits for the run's terminal write (`finalRows`),
   * which records it in the same statement, saving a commit on the run's critical path.
   */
  recordArtifact(
    kind: 'trace' | 'video',
    stepIndex: number | null,
    name: string,
    contentType: string,
    body: Buffer,
  ): void {
    this.enqueue(async () => {
      const id = newId(ID_PREFIX.artifact);
      const storageKey = artifactKey(this.run.workspaceId, this.run.id, id, name);
      await this.deps.store.put(storageKey, body);
      this.finalRows.push({
        id,
        run_id: this.run.id,
        workspace_id: this.run.workspaceId,
        attempt: this.attempt,
        kind,
        step_index: stepIndex,
        name,
        storage_key: storageKey,
        content_type: contentType,
        size_bytes: body.length,
      });
    });
  }

  private async storeArtifact(
    kind: 'screenshot' | 'trace' | 'video',
    stepIndex: number | null,
    name: string,
    contentType: string,
    body: Buffer,
  ): Promise<string> {
    const id = newId(ID_PREFIX.artifact);
    const storageKey = artifactKey(this.run.workspaceId, this.run.id, id, name);
    await this.deps.store.put(storageKey, body);
    await this.deps.db.artifact.create({
      data: {
        id,
        runId: this.run.id,
        workspaceId: this.run.workspaceId,
        attempt: this.attempt,
        kind,
        stepIndex,
        name,
        storageKey,
        contentType,
        sizeBytes: body.length,
      },
    });
    return id;
  }

  async flush(): Promise<void> {
    await Promise.all(this.pending);
    if (this.failure) throw this.failure;
  }
}

const TIMED_OUT = Symbol('timed out');

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

function safeTarget(step: Step, baseUrl: string): string {
  try {
    return describeTarget(step, baseUrl);
  } catch {
    return step.action;
  }
}

/** A screenshot step's name as a file name. */
function safeName(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9_.-]+/g, '-')
      .replace(/^[.-]+/, '')
      .slice(0, 80) || 'screenshot'
  );
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}
