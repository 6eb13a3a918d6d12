import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Db } from '@testrun/core/db';
import { deployFixture, startRecorder } from '../e2e/playwright-site';
import { apiClient, spawnService, startApi, waitForLog, waitUntil } from '../e2e/support';
import { createTenant, testDb } from '../support/harness';
import { CHAOS_WORKER_ENV } from './steady-suite';

/**
 * A worker killed with SIGKILL while a batch of Playwright tests runs (docs/WORKER.md, "At least
 * once"): the test it was running runs again, as a new attempt of its run (not a retry of the
 * test's), once the batch's lease has lapsed, and ends with its own verdict. It used to end
 * `error`/`timeout` ("the worker did not report back") on its first attempt: the run's deadline,
 * counted from the stored budget, came before the batch's lease let another worker take it over.
 */
jest.setTimeout(240_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-time');

let db: Db;
let site: Awaited<ReturnType<typeof startRecorder>>;
let api: Awaited<ReturnType<typeof startApi>>;
const children: ChildProcess[] = [];

function startWorker() {
  // A short grace past a run's deadline: a deadline kept from the run's budget would end it first.
  const proc = spawnService('worker', { ...CHAOS_WORKER_ENV, RECONCILE_DEADLINE_GRACE_MS: '1000' });
  children.push(proc.child);
  return proc;
}

beforeAll(async () => {
  db = testDb();
  [site, api] = await Promise.all([startRecorder(), startApi()]);
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all([api.close(), site.close()]);
  await db.$disconnect();
});

it('runs again the Playwright test whose worker was killed, and records its own verdict', async () => {
  const first = startWorker();
  await waitForLog(first, 'worker ready');
  const tenant = await createTenant(db, { scopes: ['deploy'] });
  const project = {
    slug: 'pw-killed',
    name: 'Killed',
    baseUrl: site.url,
    playwright: { config: 'e2e/playwright.config.js' },
    suites: [{ slug: 'kill', name: 'Kill', playwright: { grep: 'takes a while|is slow' } }],
  };
  await deployFixture(api.url, tenant.key, path.join(FIXTURE, 'testrun.yaml'), project);
  const client = apiClient(api.url, tenant.key);
  const suiteRunId = await client.createSuiteRun({ projectSlug: 'pw-killed', suiteSlug: 'kill' });
  const longest = () => db.run.findFirstOrThrow({ where: { suiteRunId, testName: 'takes a while' } });
  await waitUntil(async () => (await longest()).status === 'running', 100);
  // Well into its 8 s: the worker dies with its sandbox.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  first.child.kill('SIGKILL');
  await first.exited;
  expect((await longest()).status).toBe('running');

  const second = startWorker();
  await waitForLog(second, 'worker ready');
  await client.waitSuiteRun(suiteRunId);
  second.child.kill('SIGTERM');
  await second.exited;

  const run = await db.run.findFirstOrThrow({
    where: { suiteRunId, testName: 'takes a while' },
    include: { stepResults: true, earlierAttempts: true },
  });
  expect([run.status, run.outcomeCode, run.resultSummary]).toEqual(['passed', null, 'Passed']);
  // A new attempt of the run, not a retry of the test: not flaky, no earlier try recorded.
  expect([run.attempt, run.retry, run.earlierAttempts]).toEqual([2, 0, []]);
  expect(run.stepResults.filter((s) => s.attempt === 2).map((s) => s.label)).toContain('work for a while');
});
