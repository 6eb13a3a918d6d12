import { addRunJobs, createRedis, createRunQueue } from '@testrun/core/queue';
import { parsePrometheus, sampleSum } from '../support/prometheus';
import { WorkerMetrics } from '../../apps/worker/src/service/worker-metrics';

// The worker's metrics against a real queue on the test Redis (a prefix of its own): what each
// observation adds, and the queue's states as BullMQ keeps them (prioritized jobs apart from waiting).
const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const queue = createRunQueue(redis, `${process.env.REDIS_PREFIX}-wm-${process.pid}`);
let contexts = 0;
const metrics = new WorkerMetrics({ queue, openContexts: () => contexts });

afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  redis.disconnect();
});

async function samples() {
  return parsePrometheus(await metrics.registry.metrics()).samples;
}

const timings = { totalMs: 1500, browserMs: 1000 };

it('counts recorded runs by status and code, and nothing for runs it did not end', async () => {
  metrics.observeRun({ kind: 'finished', status: 'passed', attempt: 1, recorded: true, timings });
  metrics.observeRun({ kind: 'finished', status: 'error', code: 'timeout', attempt: 1, recorded: true, timings });
  metrics.observeRun({ kind: 'finished', status: 'failed', attempt: 1, recorded: false, timings });
  metrics.observeRun({ kind: 'not_runnable', reason: 'terminal' });
  const s = await samples();
  expect(sampleSum(s, 'testrun_worker_runs_finished_total', { status: 'passed', code: 'none' })).toBe(1);
  expect(sampleSum(s, 'testrun_worker_runs_finished_total', { status: 'error', code: 'timeout' })).toBe(1);
  expect(sampleSum(s, 'testrun_worker_runs_finished_total')).toBe(2);
  expect(sampleSum(s, 'testrun_worker_run_duration_seconds_sum', { status: 'passed' })).toBe(1.5);
});

it('counts relaunches, reconciler actions of passes that ran, and open contexts', async () => {
  metrics.countRelaunch();
  metrics.observeReconcilePass({ ran: true, requeued: ['a', 'b'], timedOut: ['c'], lost: [], purged: 4 });
  metrics.observeReconcilePass({ ran: false, requeued: ['x'], timedOut: [], lost: [], purged: 0 });
  contexts = 3;
  const s = await samples();
  expect(sampleSum(s, 'testrun_worker_browser_relaunches_total')).toBe(1);
  expect(sampleSum(s, 'testrun_worker_reconciler_actions_total', { action: 'requeued' })).toBe(2);
  expect(sampleSum(s, 'testrun_worker_reconciler_actions_total', { action: 'timed_out' })).toBe(1);
  expect(sampleSum(s, 'testrun_worker_reconciler_actions_total', { action: 'lost' })).toBe(0);
  expect(sampleSum(s, 'testrun_worker_reconciler_actions_total', { action: 'purged' })).toBe(4);
  expect(sampleSum(s, 'testrun_worker_browser_contexts')).toBe(3);
});

it('counts webhook attempts by outcome', async () => {
  metrics.countWebhookAttempt('retry');
  metrics.countWebhookAttempt('retry');
  metrics.countWebhookAttempt('delivered');
  const s = await samples();
  expect(sampleSum(s, 'testrun_worker_webhook_attempts_total', { outcome: 'retry' })).toBe(2);
  expect(sampleSum(s, 'testrun_worker_webhook_attempts_total', { outcome: 'delivered' })).toBe(1);
  expect(sampleSum(s, 'testrun_worker_webhook_attempts_total', { outcome: 'failed' })).toBe(0);
});

it('reads the queue on each scrape: jobs with a priority are prioritized, not waiting', async () => {
  await addRunJobs(
    queue,
    ['run_a', 'run_b', 'run_c'],
    new Map([
      ['run_a', 1],
      ['run_b', 2],
    ]),
  );
  const s = await samples();
  expect(sampleSum(s, 'testrun_queue_jobs', { state: 'prioritized' })).toBe(2);
  expect(sampleSum(s, 'testrun_queue_jobs', { state: 'waiting' })).toBe(1);
  expect(sampleSum(s, 'testrun_queue_jobs', { state: 'active' })).toBe(0);
});
