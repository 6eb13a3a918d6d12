import * as core from '@actions/core';
import { TestrunClient } from '@testrun/client';
import { didMainFinish, readEnqueued } from './state';

/**
 * The post step (action.yml runs it always). When the main step did not reach its verdict (the job
 * was cancelled, or the step was killed), it cancels what the main step enqueued, from the ids it
 * saved right after the enqueue: queued runs end skipped and running ones are stopped, instead of
 * running on for nobody. A failure to cancel is a warning: the job's outcome is already decided.
 */
export async function runPost(): Promise<void> {
  if (didMainFinish()) return;
  const enqueued = readEnqueued();
  if (enqueued === null) {
    core.info('The job was cancelled before this step enqueued anything.');
    return;
  }
  const what =
    enqueued.suiteRunId !== null ? `suite run ${enqueued.suiteRunId}` : `run(s) ${enqueued.runIds.join(', ')}`;
  const apiKey = core.getInput('api-key');
  core.setSecret(apiKey);
  try {
    const client = new TestrunClient({
      apiUrl: core.getInput('api-url'),
      apiKey,
      userAgent: 'testrun-action',
      maxRetries: 2,
    });
    if (enqueued.suiteRunId !== null) await client.cancelSuiteRun(enqueued.suiteRunId);
    else for (const runId of enqueued.runIds) await client.cancelRun(runId);
    core.notice(`The job was cancelled while waiting for ${what}: cancelled it on the service.`, {
      title: 'Testrun runs cancelled',
    });
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    core.warning(`The job was cancelled while waiting for ${what}, and cancelling it failed: ${reason}`, {
      title: 'Testrun runs continue',
    });
  }
}
