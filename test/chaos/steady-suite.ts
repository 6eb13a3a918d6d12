import type { ProjectFile, RunStatus, SuiteRun } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import { waitUntil } from '../e2e/support';

/**
 * The project the chaos tests run: one suite `steady` of `tests` tests that pass when nothing goes
 * wrong, each busy long enough (`busyMs`, 1.5 s by default) for a fault to land while it runs.
 */
export function steadyProject(baseUrl: string, tests: number, busyMs = 1_500): ProjectFile {
  return {
    slug: 'chaos',
    name: 'Chaos',
    baseUrl,
    suites: [
      {
        slug: 'steady',
        name: 'Steady',
        tests: Array.from({ length: tests }, (_, i) => ({
          key: `t${i + 1}`,
          name: `Test ${i + 1}`,
          steps: [
            { action: 'goto' as const, url: '/' },
            { action: 'wait' as const, ms: busyMs },
            { action: 'expectText' as const, selector: 'h1', text: 'Testrun Shop' },
          ],
        })),
      },
    ],
  };
}

const TERMINAL: readonly RunStatus[] = ['passed', 'failed', 'error', 'skipped'];

/**
 * The suite-consistency check every chaos test ends with, on a suite run the API reported terminal:
 * it has `tests` runs, each terminal, each counted exactly once (the counters, moved by every state
 * change, equal a count of the children; none left queued or running), and none took more than one
 * retry. Returns the runs for the test's own verdict checks.
 */
export async function expectSuiteConsistent(
  db: Db,
  suiteRun: SuiteRun,
  tests: number,
): Promise<Array<{ id: string; status: RunStatus; attempt: number; resultSummary: string }>> {
  const runs = await db.run.findMany({
    where: { suiteRunId: suiteRun.id },
    select: { id: true, status: true, attempt: true, resultSummary: true },
  });
  expect(runs).toHaveLength(tests);
  expect(runs.filter((r) => !TERMINAL.includes(r.status))).toEqual([]);
  const count = (status: RunStatus) => runs.filter((r) => r.status === status).length;
  expect(suiteRun).toMatchObject({
    total_count: tests,
    passed_count: count('passed'),
    failed_count: count('failed'),
    error_count: count('error'),
    skipped_count: count('skipped'),
  });
  const row = await db.suiteRun.findUniqueOrThrow({ where: { id: suiteRun.id } });
  expect([row.queuedCount, row.runningCount]).toEqual([0, 0]);
  expect(runs.filter((r) => r.attempt > 2)).toEqual([]);
  return runs;
}

/** POSTs the steady suite with an Idempotency-Key, as a client retrying through an outage does. */
export function postSteadySuite(apiUrl: string, apiKey: string, idempotencyKey: string): Promise<Response> {
  return fetch(`${apiUrl}/api/v1/runs`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
    },
    body: JSON.stringify({ projectSlug: 'chaos', suiteSlug: 'steady' }),
  });
}

/** What the API answers while Postgres or Redis is down: 503, a Retry-After, a problem document. */
export function expectUnavailable(res: Response): void {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

/**
 * Retries `post` (the same Idempotency-Key each time) until the recovered API creates the suite run,
 * checks that one more retry replays it, and returns its id.
 */
export async function expectRetryCreatesOnce(post: () => Promise<Response>): Promise<string> {
  const created = await waitUntil(async () => {
    const res = await post();
    return res.status === 201 ? res : undefined;
  }, 250);
  const { suiteRunId } = (await created.json()) as { suiteRunId: string };
  const replay = await post();
  expect(replay.status).toBe(201);
  expect(((await replay.json()) as { suiteRunId: string }).suiteRunId).toBe(suiteRunId);
  return suiteRunId;
}

/** A worker that notices a lost job or a dead peer within seconds: short locks, a reconciler pass a second. */
export const CHAOS_WORKER_ENV = {
  WORKER_CONCURRENCY: '2',
  WORKER_LOCK_DURATION_MS: '2000',
  WORKER_STALLED_INTERVAL_MS: '1000',
  RECONCILE_INTERVAL_MS: '1000',
  WORKER_VIDEO: 'off',
  LOG_LEVEL: 'info',
};
