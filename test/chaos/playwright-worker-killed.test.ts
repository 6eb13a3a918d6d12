import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { deployForTenant, oneSuiteProject, usePlaywrightSite } from '../e2e/playwright-site';
import { spawnService, waitForLog, waitUntil } from '../e2e/support';
import { CHAOS_WORKER_ENV } from './steady-suite';

/**
 * A worker killed with SIGKILL while a batch of Playwright tests runs (docs/WORKER.md, "At least
 * once"): the test it was running runs again, as a new attempt of its run (not a retry of the
 * test's), once the batch's lease has lapsed, and ends with its own verdict. It used to end
 * `error`/`timeout` ("the worker did not report back") on its first attempt: the run's deadline,
 * counted from the stored budget, came before the batch's lease let another worker take it over.
 * The lease's minute passes in the database (the lease and the deadline moved earlier), not in
 * waiting.
 */
jest.setTimeout(240_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-time');

const children: ChildProcess[] = [];
const parts = usePlaywrightSite({
  stop: () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  },
});

function startWorker() {
  // A short grace past a run's deadline: a deadline kept from the run's budget would end it first.
  const proc = spawnService('worker', { ...CHAOS_WORKER_ENV, RECONCILE_DEADLINE_GRACE_MS: '1000' });
  children.push(proc.child);
  return proc;
}

it('runs again the Playwright test whose worker was killed, and records its own verdict', async () => {
  const first = startWorker();
  await waitForLog(first, 'worker ready');
  const selection = { slug: 'kill', playwright: { grep: 'takes a while|is slow' } };
  const project = oneSuiteProject('pw-killed', parts.site.url, 'e2e/playwright.config.js', selection);
  const { client } = await deployForTenant(parts, path.join(FIXTURE, 'testrun.yaml'), project);
  const suiteRunId = await client.createSuiteRun({ projectSlug: 'pw-killed', suiteSlug: 'kill' });
  const longest = () => parts.db.run.findFirstOrThrow({ where: { suiteRunId, testName: 'takes a while' } });
  await waitUntil(async () => (await longest()).status === 'running', 100);
  // Well into its 8 s: the worker dies with its sandbox.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  first.child.kill('SIGKILL');
  await first.exited;
  expect((await longest()).status).toBe('running');

  const second = startWorker();
  await waitForLog(second, 'worker ready');
  // The batch's lease (60 s, which the dead worker renews no more) is not waited out: what is left
  // of it passes in the database instead, the runs' lease and deadlines moved that much earlier,
  // the lease to lapse in 2 s. A deadline kept from the stored budget is then long past, and the
  // second worker's reconciler (which ends overdue runs before it requeues) would end the run
  // error/timeout first. The batch's other test, reserved but not begun (queued), holds the same
  // lease: left as it was, it would wait out the rest of the minute before another worker took it.
  const moved = await parts.db.$queryRaw<{ status: string }[]>`
    UPDATE runs SET batch_lease_until = now() + interval '2 seconds',
      deadline_at = deadline_at - (batch_lease_until - (now() + interval '2 seconds'))
    WHERE suite_run_id = ${suiteRunId} AND status IN ('queued', 'running')
      AND batch_lease_until > now() + interval '2 seconds'
    RETURNING status::text AS status`;
  expect(moved.map((r) => r.status)).toContain('running');
  await client.waitSuiteRun(suiteRunId);
  second.child.kill('SIGTERM');
  await second.exited;

  const run = await parts.db.run.findFirstOrThrow({
    where: { suiteRunId, testName: 'takes a while' },
    include: { stepResults: true, earlierAttempts: true },
  });
  expect([run.status, run.outcomeCode, run.resultSummary]).toEqual(['passed', null, 'Passed']);
  // A new attempt of the run, not a retry of the test: not flaky, no earlier try recorded.
  expect([run.attempt, run.retry, run.earlierAttempts]).toEqual([2, 0, []]);
  expect(run.stepResults.filter((s) => s.attempt === 2).map((s) => s.label)).toContain('work for a while');
});
