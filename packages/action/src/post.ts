import * as core from '@actions/core';
import { readEnqueued } from './state';

/**
 * The post step, which action.yml runs only when the job was cancelled (`post-if: cancelled()`).
 * Its purpose is to cancel what the main step enqueued, from the ids the main step saved right after
 * the enqueue. API v1 has no cancellation endpoint yet, so for now it names the runs that go on
 * on the service; the call belongs here once the API offers one.
 */
export function runPost(): void {
  const enqueued = readEnqueued();
  if (enqueued === null) {
    core.info('The job was cancelled before this step enqueued anything.');
    return;
  }
  const what =
    enqueued.suiteRunId !== null ? `suite run ${enqueued.suiteRunId}` : `run(s) ${enqueued.runIds.join(', ')}`;
  core.notice(
    `The job was cancelled while waiting for ${what}. The Testrun API has no cancellation yet: what was enqueued runs to its end on the service.`,
    { title: 'Testrun runs continue' },
  );
}
