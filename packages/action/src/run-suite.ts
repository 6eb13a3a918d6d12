import * as core from '@actions/core';
import { countStatuses, TestrunWaitTimeoutError, type TestrunClient } from '@testrun/client';
import {
  addDetails,
  bareTest,
  exitCodeFor,
  suiteCounts,
  summarize,
  testsFromRuns,
  testsFromSuiteRun,
  verdictLine,
} from '@testrun/cli/ci';
import {
  formatDuration,
  type ReportCounts,
  type ReportTest,
  type Run,
  type RunCreateResponse,
  type RunReport,
  type SuiteRun,
  type SuiteRunStatus,
} from '@testrun/contracts';
import type { ActionInputs } from './inputs';
import { saveEnqueued, type Enqueued } from './state';

/**
 * Enqueues what the inputs address, records it for the post step, waits for the verdict and
 * returns the same report `testrun run --json` prints. API refusals and network faults propagate.
 */
export async function runSuite(client: TestrunClient, inputs: ActionInputs, now = Date.now): Promise<RunReport> {
  const { target } = inputs;
  const enqueued = await client.enqueue(inputs.request, { idempotencyKey: inputs.idempotencyKey });
  const ids = enqueuedIds(enqueued.body);
  saveEnqueued(ids);
  const replayed = enqueued.replayed ? ' (replayed: this key was already used, nothing new was enqueued)' : '';
  if (ids.suiteRunId !== null) core.info(`Enqueued suite run ${ids.suiteRunId}${replayed}`);
  else core.info(`Enqueued ${ids.runIds.join(', ')}${replayed}`);

  const started = now();
  const progress = new Progress();
  const waitOptions = { timeoutMs: inputs.timeoutMs, pollIntervalMs: inputs.pollIntervalMs };
  let timedOut = false;
  try {
    if (ids.suiteRunId !== null)
      await client.waitForSuiteRun(ids.suiteRunId, { ...waitOptions, onProgress: progress.onSuiteRun });
    else await client.waitForRuns(ids.runIds, { ...waitOptions, onProgress: (runs) => progress.onRuns(runs) });
  } catch (e) {
    if (!(e instanceof TestrunWaitTimeoutError)) throw e;
    timedOut = true;
    if (progress.tests.length === 0 && target.kind !== 'suite')
      progress.assumeQueued(
        ids.runIds.map((id) => bareTest(id, target.kind === 'test' ? target.testId : id, 'queued')),
      );
  }
  const { tests, counts, status, suiteRunUrl } = progress;
  await addDetails(client, tests);
  for (const t of tests) {
    if (t.status !== 'failed' && t.status !== 'error') continue;
    core.info(
      `${t.status.toUpperCase()} ${t.name}: ${t.result_summary ?? t.status}${t.viewUrl ? `\n  ${t.viewUrl}` : ''}`,
    );
  }
  return {
    kind: target.kind,
    project: target.kind === 'test' ? null : target.project,
    suite: target.kind === 'test' ? null : target.suite,
    testId: target.kind === 'test' ? target.testId : null,
    ...ids,
    suiteRunUrl,
    idempotencyKey: enqueued.idempotencyKey,
    replayed: enqueued.replayed,
    status,
    counts,
    tests,
    timedOut,
    durationMs: now() - started,
    exitCode: exitCodeFor(status, timedOut),
    message: verdictLine({ kind: target.kind, status, counts, timedOut, tests }, formatDuration(inputs.timeoutMs)),
  };
}

function enqueuedIds(body: RunCreateResponse): Enqueued {
  if ('suiteRunId' in body) return { suiteRunId: body.suiteRunId, runIds: [] };
  if ('runIds' in body) return { suiteRunId: null, runIds: body.runIds };
  return { suiteRunId: null, runIds: [body.runId] };
}

/** What the polls have shown so far; a line in the log each time a test finishes. */
class Progress {
  tests: ReportTest[] = [];
  counts: ReportCounts = countStatuses([]);
  status: SuiteRunStatus = 'queued';
  suiteRunUrl: string | null = null;
  private readonly logged = new Set<string>();

  readonly onSuiteRun = (s: SuiteRun): void => {
    if (this.suiteRunUrl === null) core.info(`Suite run: ${s.suiteRunUrl}`);
    this.suiteRunUrl = s.suiteRunUrl;
    this.tests = testsFromSuiteRun(s);
    this.counts = suiteCounts(s, this.tests);
    this.status = s.status;
    this.logFinished();
  };

  onRuns(runs: readonly Run[]): void {
    this.tests = testsFromRuns(runs);
    ({ counts: this.counts, status: this.status } = summarize(this.tests));
    this.logFinished();
  }

  assumeQueued(tests: ReportTest[]): void {
    this.tests = tests;
    ({ counts: this.counts, status: this.status } = summarize(tests));
  }

  private logFinished(): void {
    for (const t of this.tests) {
      if (this.logged.has(t.runId) || t.status === 'queued' || t.status === 'running') continue;
      this.logged.add(t.runId);
      core.info(`  ${t.status} ${t.name}${t.result_summary && t.status !== 'passed' ? `: ${t.result_summary}` : ''}`);
    }
  }
}
