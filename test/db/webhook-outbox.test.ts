import { addWebhookEndpoint, applyProject, setWebhookEnabled } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { abortRun, finishRun, startRun } from '@testrun/core/runs';
import { deriveKeys } from '@testrun/core/secrets';
import { anyString, stringMatching } from '../api/typed';
import {
  applySampleProject,
  createTenant,
  insertSuiteRuns,
  sampleProject,
  testDb,
  testSecret,
} from '../support/harness';

/**
 * The webhook outbox is written by the database in the statement that ends a run or suite run:
 * whichever code path ends it (the worker's finishRun, the reconciler's abortRun, a run created
 * skipped), the events commit with the transition or not at all, and nothing is written for a
 * move that is not terminal or not accepted.
 */
let db: Db;
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.$disconnect();
});

const key = () => deriveKeys(testSecret()).headers;

/** A workspace with a suite of three tests (the last disabled), an endpoint for run.finished only and one for both events. */
async function setUp() {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count: 3, disabled: 1 }));
  const runsOnly = await addWebhookEndpoint(db, key(), {
    workspaceId: t.workspace.id,
    url: 'http://127.0.0.1:9/runs',
    events: ['run.finished'],
  });
  const both = await addWebhookEndpoint(db, key(), {
    workspaceId: t.workspace.id,
    url: 'http://127.0.0.1:9/all',
    events: ['run.finished', 'suite_run.finished'],
  });
  const suiteId = applied.suites[0]?.id ?? '';
  return { workspaceId: t.workspace.id, suiteId, runsOnly, both };
}

/** The outbox rows of a resource as [event, endpoint id], in a stable order. */
async function events(resourceId: string): Promise<Array<[string, string]>> {
  const rows = await db.webhookMessage.findMany({ where: { resourceId }, select: { event: true, endpointId: true } });
  return rows.map((r): [string, string] => [r.event, r.endpointId]).sort((a, b) => a[1].localeCompare(b[1]));
}

describe('the webhook outbox', () => {
  it('gets one row per subscribed endpoint when a run or suite run ends, and none before', async () => {
    const { workspaceId, suiteId, runsOnly, both } = await setUp();
    const created = await insertSuiteRuns(db, workspaceId, suiteId, { baseUrl: 'http://127.0.0.1:2' });
    const [first, second, disabled] = created.runIds as [string, string, string];
    const suiteRunId = created.suiteRunId ?? '';
    const forRun = [
      ['run.finished', runsOnly.id],
      ['run.finished', both.id],
    ].sort((a, b) => (a[1] ?? '').localeCompare(b[1] ?? ''));

    // Created skipped: finished at creation. Queued runs and the suite run: nothing yet.
    expect(await events(disabled)).toEqual(forRun);
    expect(await events(first)).toEqual([]);
    expect(await events(suiteRunId)).toEqual([]);

    // queued → running is no end.
    await startRun(db, first, 2);
    expect(await events(first)).toEqual([]);

    // A terminal write rolled back leaves no event behind.
    await expect(
      db.$transaction(async (tx) => {
        expect(await finishRun(tx, first, 1, { status: 'passed', resultSummary: 'Passed.' })).toBe(true);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await events(first)).toEqual([]);

    expect(await finishRun(db, first, 1, { status: 'passed', resultSummary: 'Passed.' })).toBe(true);
    expect(await events(first)).toEqual(forRun);
    // A duplicate delivery changes nothing and writes nothing.
    expect(await finishRun(db, first, 1, { status: 'failed', resultSummary: 'Again.' })).toBe(false);
    expect(await events(first)).toEqual(forRun);
    expect(await events(suiteRunId)).toEqual([]);

    // The reconciler's path (a queued run ended as error) ends the suite run too: one event for the
    // endpoint subscribed to suite runs.
    expect(await abortRun(db, second, { code: 'worker_lost', resultSummary: 'Lost.' })).toBe(true);
    expect(await events(second)).toEqual(forRun);
    expect(await events(suiteRunId)).toEqual([['suite_run.finished', both.id]]);
    expect((await db.suiteRun.findUniqueOrThrow({ where: { id: suiteRunId } })).status).toBe('error');
  });

  it("writes nothing for a workspace without endpoints, nor for another workspace's endpoints", async () => {
    const other = await setUp();
    const t = await createTenant(db);
    const applied = await applySampleProject(db, t.workspace.id, sampleProject(`q-${t.tag}`, { count: 1 }));
    const created = await insertSuiteRuns(db, t.workspace.id, applied.suites[0]?.id ?? '', {
      baseUrl: 'http://127.0.0.1:2',
    });
    const runId = created.runIds[0] ?? '';
    await startRun(db, runId, 2);
    expect(await finishRun(db, runId, 1, { status: 'passed', resultSummary: 'Passed.' })).toBe(true);
    expect(await events(runId)).toEqual([]);
    expect(await events(created.suiteRunId ?? '')).toEqual([]);
    expect(await db.webhookMessage.count({ where: { workspaceId: other.workspaceId } })).toBe(0);
  });

  it('a disabled endpoint gets no new messages until it is enabled again', async () => {
    const { workspaceId, suiteId, runsOnly, both } = await setUp();
    await setWebhookEnabled(db, runsOnly.id, false);
    const created = await insertSuiteRuns(db, workspaceId, suiteId, { baseUrl: 'http://127.0.0.1:2' });
    expect(await events(created.runIds[2] ?? '')).toEqual([['run.finished', both.id]]);
    await setWebhookEnabled(db, runsOnly.id, true);
    const runId = created.runIds[0] ?? '';
    await startRun(db, runId, 2);
    expect(await finishRun(db, runId, 1, { status: 'passed', resultSummary: 'Passed.' })).toBe(true);
    expect((await events(runId)).length).toBe(2);
  });

  it("an endpoint a project file manages gets that project's events only, and goes when the file drops it", async () => {
    const t = await createTenant(db);
    const file = sampleProject(`w-${t.tag}`, { count: 1 });
    const url = 'http://127.0.0.1:9/project-hooks';
    const applied = await applyProject(
      db,
      t.workspace.id,
      { ...file, webhooks: [{ url, events: ['run.finished'] }] },
      { webhookKey: key() },
    );
    const managed = applied.webhooks?.[0];
    expect(managed).toEqual({
      id: anyString(),
      url,
      events: ['run.finished'],
      secret: stringMatching(/^whsec_/),
    });
    // Applying again keeps the endpoint and never shows its secret again.
    const again = await applyProject(db, t.workspace.id, { ...file, webhooks: [{ url }] }, { webhookKey: key() });
    expect(again.webhooks).toEqual([{ id: managed?.id, url, events: ['run.finished', 'suite_run.finished'] }]);

    const other = await applySampleProject(db, t.workspace.id, sampleProject(`o-${t.tag}`, { count: 1 }));
    const finishOne = async (suiteId: string) => {
      const created = await insertSuiteRuns(db, t.workspace.id, suiteId, { baseUrl: 'http://127.0.0.1:2' });
      const runId = created.runIds[0] ?? '';
      await startRun(db, runId, 2);
      expect(await finishRun(db, runId, 1, { status: 'passed', resultSummary: 'Passed.' })).toBe(true);
      return { runId, suiteRunId: created.suiteRunId ?? '' };
    };
    const mine = await finishOne(applied.suites[0]?.id ?? '');
    expect(await events(mine.runId)).toEqual([['run.finished', managed?.id]]);
    expect(await events(mine.suiteRunId)).toEqual([['suite_run.finished', managed?.id]]);
    const theirs = await finishOne(other.suites[0]?.id ?? '');
    expect(await events(theirs.runId)).toEqual([]);

    // A file without `webhooks` manages none: the endpoint and its messages go.
    const dropped = await applyProject(db, t.workspace.id, file);
    expect(dropped.webhooks).toBeUndefined();
    expect(await db.webhookEndpoint.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
    expect(await db.webhookMessage.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
  });
});
