import { writeFileSync } from 'node:fs';
import { TestrunWaitTimeoutError } from '@testrun/client';
import { formatDuration, type EnqueuedReport, type RunReport } from '@testrun/contracts';
import { isReportable, reportFailure, type CommandContext, type openCommand } from './connection';
import { buildJunitXml } from './junit';
import type { Output } from './output';
import { addDetails, closingLines, EXIT, exitCodeFor, setupClosingLines, verdictLine } from './report';
import { newBaselinesHint } from './visual-notes';
import { WaitProgress } from './wait-progress';

/** The flags of `testrun run` and `testrun rerun` that say how to wait and report. */
export interface FollowFlags {
  junit?: string;
  json?: boolean;
  wait: boolean;
  /** False with `--no-cancel-on-exit`: on SIGINT/SIGTERM, leave what was enqueued running. */
  cancelOnExit: boolean;
}

/** What was enqueued, as the report names it. */
type EnqueuedBase = Omit<EnqueuedReport, 'suiteRunUrl' | 'status' | 'exitCode'>;
type FollowIo = { out: Output; client: OpenedClient; now: () => number; ctx: CommandContext };
type Budget = { timeoutMs: number; pollIntervalMs: number };

/** The signals that end a CI job: the CLI cancels what it enqueued on either (unless --no-cancel-on-exit). */
const EXIT_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * What `testrun run` and `testrun rerun` share after their flags: `enqueue` enqueues, says what and
 * names it; then {@link followEnqueued}. An API error or network fault on the way is reported (exit 2).
 */
export async function enqueueAndFollow(
  io: FollowIo,
  flags: FollowFlags,
  budget: Budget,
  enqueue: () => Promise<EnqueuedBase>,
): Promise<number> {
  try {
    return await followEnqueued(io, flags, await enqueue(), budget);
  } catch (e) {
    io.out.done();
    if (!isReportable(e)) throw e;
    return reportFailure(e, io.out, Boolean(flags.json));
  }
}

/**
 * After the enqueue: prints the ids (with --no-wait), or waits for the verdict and reports it (text,
 * JSON, JUnit). While it waits, SIGINT or SIGTERM (a CI job cancelled) cancels the runs it enqueued,
 * unless --no-cancel-on-exit, and exits 2.
 */
async function followEnqueued(io: FollowIo, flags: FollowFlags, base: EnqueuedBase, budget: Budget): Promise<number> {
  const { out, client, now } = io;
  const { suiteRunId, runIds } = base;
  if (!flags.wait) {
    let suiteRunUrl: string | null = null;
    if (suiteRunId !== null) {
      suiteRunUrl = (await client.getSuiteRun(suiteRunId)).suiteRunUrl;
      out.info(`Suite run: ${suiteRunUrl}`);
    }
    const report: EnqueuedReport = { ...base, suiteRunUrl, status: 'queued', exitCode: EXIT.passed };
    out.result(flags.json ? JSON.stringify(report, null, 2) : (suiteRunId ?? runIds.join('\n')));
    return report.exitCode;
  }

  const started = now();
  const progress = new WaitProgress({
    suiteRunUrl: (url) => out.info(`Suite run: ${url}`),
    changed: (p) => {
      out.setups(p.setupTests);
      out.progress(p.tests, p.counts, p.status, started, p.wait);
    },
  });
  let timedOut = false;
  const exit = watchExitSignals(io.ctx);
  try {
    const options = { ...budget, signal: exit.signal };
    const [runId] = runIds;
    if (suiteRunId !== null) await client.waitForSuiteRun(suiteRunId, { ...options, onProgress: progress.onSuiteRun });
    else if (base.kind === 'test' && runId !== undefined)
      await client.waitForRun(runId, { ...options, onProgress: (r) => progress.onRuns([r]) });
    else await client.waitForRuns(runIds, { ...options, onProgress: progress.onRuns });
  } catch (e) {
    if (exit.received !== null) return await cancelOnSignal(io, flags, base, exit.received);
    if (!(e instanceof TestrunWaitTimeoutError)) throw e;
    timedOut = true;
    progress.timedOut(base, runIds);
  } finally {
    exit.stop();
  }
  out.done();
  const { tests, counts, status, suiteRunUrl, setupTests } = progress;
  // Attachments are listed in the JUnit and the JSON report only: read them only for those.
  await addDetails(client, tests, { attachments: Boolean(flags.junit) || Boolean(flags.json) });

  const exitCode = exitCodeFor(status, timedOut);
  const report: RunReport = {
    ...base,
    suiteRunUrl,
    status,
    counts,
    tests,
    ...(setupTests.length > 0 ? { setupTests } : {}),
    timedOut,
    durationMs: now() - started,
    exitCode,
    message: verdictLine(
      { kind: base.kind, status, counts, timedOut, tests, setupTests },
      formatDuration(budget.timeoutMs),
    ),
  };
  if (flags.junit) writeFileSync(flags.junit, out.redactText(buildJunitXml(report)));
  for (const line of [...setupClosingLines(setupTests), ...closingLines(tests)]) out.info(line);
  const baselines = newBaselinesHint(tests, suiteRunId);
  if (baselines) out.info(baselines);
  if (suiteRunUrl) out.info(`Details: ${suiteRunUrl}`);
  out.summary(report.message);
  if (flags.json) out.result(JSON.stringify(report, null, 2));
  return exitCode;
}

type OpenedClient = ReturnType<typeof openCommand>['client'];

/**
 * Listens for SIGINT and SIGTERM while the CLI waits (the listeners replace Node's default exit, so
 * the CLI can cancel first), and aborts the wait when one arrives. `received` names it.
 */
function watchExitSignals(ctx: CommandContext): {
  signal: AbortSignal;
  received: NodeJS.Signals | null;
  stop: () => void;
} {
  const controller = new AbortController();
  const source = ctx.signals ?? process;
  const listeners = EXIT_SIGNALS.map((name) => {
    const listener = () => {
      state.received = name;
      controller.abort(new Error(`received ${name}`));
    };
    source.once(name, listener);
    return [name, listener] as const;
  });
  const state = {
    signal: controller.signal,
    received: null as NodeJS.Signals | null,
    stop: () => {
      for (const [name, listener] of listeners) source.off(name, listener);
    },
  };
  return state;
}

/** The job was cancelled: cancel what was enqueued (unless told not to), say so, exit 2. */
async function cancelOnSignal(
  io: { out: Output; client: OpenedClient },
  flags: FollowFlags,
  base: EnqueuedBase,
  received: NodeJS.Signals,
): Promise<number> {
  const { out, client } = io;
  out.done();
  const ids = base.suiteRunId !== null ? [base.suiteRunId] : base.runIds;
  if (!flags.cancelOnExit) {
    out.summary(`Received ${received}; left ${ids.join(', ')} running (--no-cancel-on-exit).`);
    return EXIT.error;
  }
  try {
    if (base.suiteRunId !== null) await client.cancelSuiteRun(base.suiteRunId);
    else for (const id of base.runIds) await client.cancelRun(id);
    out.summary(`Received ${received}; cancelled ${ids.join(', ')}.`);
  } catch (e) {
    if (!isReportable(e)) throw e;
    out.summary(`Received ${received}; could not cancel ${ids.join(', ')}: ${(e as Error).message}`);
  }
  return EXIT.error;
}
