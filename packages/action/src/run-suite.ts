import * as core from '@actions/core';
import { TestrunWaitTimeoutError, type TestrunClient } from '@testrun/client';
import {
  addDetails,
  changedScreenshots,
  enqueuedIds,
  newBaselinesHint,
  exitCodeFor,
  replayedNote,
  verdictLine,
  WaitProgress,
  type WaitProgressView,
} from '@testrun/cli/ci';
import { formatDuration, type ReportTest, type RunReport } from '@testrun/contracts';
import { deployFile } from './deploy-file';
import type { ActionInputs } from './inputs';
import { saveEnqueued } from './state';

/**
 * Deploys the input `file` when there is one ({@link deployFile}), enqueues what the inputs address, records it for the post step, waits for the verdict and
 * returns the same report `testrun run --json` prints. API refusals and network faults propagate.
 */
export async function runSuite(client: TestrunClient, inputs: ActionInputs, now = Date.now): Promise<RunReport> {
  const { target } = inputs;
  await deployFile(client, inputs);
  const idempotencyKey = inputs.file === null ? inputs.idempotencyKey : inputs.idempotencyKeyFor(inputs.request);
  const enqueued = await client.enqueue(inputs.request, { idempotencyKey });
  const ids = enqueuedIds(enqueued.body);
  saveEnqueued(ids);
  const replayed = replayedNote(enqueued.replayed);
  if (ids.suiteRunId !== null) core.info(`Enqueued suite run ${ids.suiteRunId}${replayed}`);
  else core.info(`Enqueued ${ids.runIds.join(', ')}${replayed}`);

  const started = now();
  const progress = new WaitProgress(new LogFinished());
  const waitOptions = { timeoutMs: inputs.timeoutMs, pollIntervalMs: inputs.pollIntervalMs };
  let timedOut = false;
  try {
    if (ids.suiteRunId !== null)
      await client.waitForSuiteRun(ids.suiteRunId, { ...waitOptions, onProgress: progress.onSuiteRun });
    else await client.waitForRuns(ids.runIds, { ...waitOptions, onProgress: progress.onRuns });
  } catch (e) {
    if (!(e instanceof TestrunWaitTimeoutError)) throw e;
    timedOut = true;
    progress.timedOut(target, ids.runIds);
  }
  const { tests, counts, status, suiteRunUrl, setupTests } = progress;
  await addDetails(client, tests, { attachments: inputs.junit !== null });
  for (const t of tests) {
    if (t.status !== 'failed' && t.status !== 'error') continue;
    const screenshots = changedScreenshots(t);
    const visual = screenshots ? `\n  ${screenshots.note}. ${screenshots.hint}` : '';
    core.info(
      `${t.status.toUpperCase()} ${t.name}: ${t.result_summary ?? t.status}${visual}${t.viewUrl ? `\n  ${t.viewUrl}` : ''}`,
    );
  }
  const baselines = newBaselinesHint(tests, ids.suiteRunId);
  if (baselines) core.info(baselines);
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
    // The suite run's setup tests: in its JUnit as Playwright writes them, and apart in the verdict.
    ...(setupTests.length > 0 ? { setupTests } : {}),
    timedOut,
    durationMs: now() - started,
    exitCode: exitCodeFor(status, timedOut),
    message: verdictLine(
      { kind: target.kind, status, counts, timedOut, tests, setupTests },
      formatDuration(inputs.timeoutMs),
    ),
  };
}

/** The action's view of the wait: the suite run's link, then a line in the log each time a test finishes. */
class LogFinished implements WaitProgressView {
  private readonly logged = new Set<string>();

  suiteRunUrl(url: string): void {
    core.info(`Suite run: ${url}`);
  }

  changed({ tests }: { tests: readonly ReportTest[] }): void {
    for (const t of tests) {
      if (this.logged.has(t.runId) || t.status === 'queued' || t.status === 'running') continue;
      this.logged.add(t.runId);
      core.info(`  ${t.status} ${t.name}${t.result_summary && t.status !== 'passed' ? `: ${t.result_summary}` : ''}`);
    }
  }
}
