import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { createLogger } from '@testrun/core/logger';
import type { RunOutcome } from '@testrun/core/runs';
import { deriveKeys } from '@testrun/core/secrets';
import { executeRun, workerRunDeps, type Executor, type RunDeps } from '@testrun/worker';
import { SecretMask } from '../../apps/worker/src/run/secret-mask';
import {
  applySampleProject,
  createTenant,
  insertSuiteRuns,
  sampleProject,
  testDb,
  testSecret,
} from '../support/harness';
import { present } from '../support/present';

/**
 * A kind of test is one executor and one registry entry: a tiny third kind, an HTTP check (its
 * definition names a path; it passes when the run's target answers 2xx), registered beside the
 * worker's own executors, runs through the real lifecycle against Postgres: claim, its attempts
 * and their step rows, the run's retries, the terminal write.
 */
const KIND = 'http-check';

/** The third executor: a definition `{ check: { path } }`, one step row an attempt, no browser at all. */
const httpCheck: Executor = {
  prepare({ run }) {
    const check = (run.steps as { check?: { path?: unknown } }).check;
    if (typeof check?.path !== 'string')
      return Promise.resolve({
        outcome: { status: 'error', code: 'invalid_definition', resultSummary: 'Error: no path to check.' },
      });
    const url = new URL(check.path, run.baseUrl).href;
    return Promise.resolve({
      prepared: {
        mask: new SecretMask([]),
        async execute(attempt): Promise<RunOutcome> {
          const startedAt = new Date();
          const res = await fetch(url, { signal: attempt.signal });
          const passed = res.ok;
          attempt.writer.recordTreeSteps([
            {
              category: 'check',
              depth: 0,
              label: `GET ${check.path as string}`,
              target: url,
              location: null,
              outcome: passed ? 'passed' : 'failed',
              error: passed ? null : `answered HTTP ${res.status}`,
              startedAt,
              durationMs: Date.now() - startedAt.getTime(),
            },
          ]);
          await attempt.writer.flush();
          return passed
            ? { status: 'passed', resultSummary: `Passed: answered HTTP ${res.status}.` }
            : {
                status: 'failed',
                code: 'http_error',
                message: `answered HTTP ${res.status}`,
                step: 1,
                resultSummary: `Failed at step 1: answered HTTP ${res.status}.`,
              };
        },
      },
    });
  },
};

let db: Db;
let server: Server;
let baseUrl: string;
let scratch: string;
/** Answers per path: each request takes the next status of its list (the last one repeats). */
const answers = new Map<string, number[]>();

beforeAll(async () => {
  db = testDb();
  scratch = await mkdtemp(path.join(tmpdir(), 'third-executor-'));
  server = createServer((req, res) => {
    const list = answers.get(req.url ?? '') ?? [404];
    res.writeHead(list.length > 1 ? (list.shift() as number) : (list[0] as number)).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(scratch, { recursive: true, force: true });
  await db.$disconnect();
});

/** The worker's lifecycle dependencies with the worker's executors and the third one registered beside them. */
function depsWithThirdKind(): RunDeps {
  const headersKey = deriveKeys(testSecret()).headers;
  const base = {
    db,
    store: new LocalArtifactStore(path.join(scratch, 'store')),
    headersKey,
    logger: createLogger({ service: 'worker-test', level: process.env.LOG_LEVEL ?? 'error' }),
  };
  const noBrowser = { newContext: () => Promise.reject(new Error('this test opens no browser')) };
  const deps = workerRunDeps(base, { browser: noBrowser, scratchDir: scratch });
  return { ...deps, executors: { ...deps.executors, [KIND]: httpCheck } };
}

/** A run of a one-test suite, made a run of `kind` with `definition`, allowed `retries` retries. */
async function runOfKind(kind: string, definition: unknown, retries = 0): Promise<string> {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count: 1 }));
  const suite = present(applied.suites[0], 'the sample suite');
  const created = await insertSuiteRuns(db, t.workspace.id, suite.id, { baseUrl, retries });
  const runId = present(created.runIds[0], 'the run');
  expect((await db.run.findUniqueOrThrow({ where: { id: runId } })).kind).toBe('steps');
  await db.run.update({ where: { id: runId }, data: { kind, steps: definition as object } });
  return runId;
}

describe('a third kind of test', () => {
  it('runs through the real lifecycle: its failed attempt is retried, each recorded with its steps', async () => {
    answers.set('/flaky', [503, 200]);
    const runId = await runOfKind(KIND, { check: { path: '/flaky' } }, 1);
    const execution = await executeRun(depsWithThirdKind(), runId);
    expect(execution).toMatchObject({ kind: 'finished', status: 'passed', attempt: 2, recorded: true });
    const run = await db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ status: 'passed', attempt: 2, retry: 1 });
    expect(run.resultSummary).toContain('Passed');
    const [first] = await db.runAttempt.findMany({ where: { runId } });
    expect(first).toMatchObject({ attempt: 1, status: 'failed', outcomeCode: 'http_error', outcomeStep: 1 });
    const steps = await db.stepResult.findMany({ where: { runId }, orderBy: { attempt: 'asc' } });
    expect(steps.map((s) => [s.attempt, s.label, s.outcome, s.error])).toEqual([
      [1, 'GET /flaky', 'failed', 'answered HTTP 503'],
      [2, 'GET /flaky', 'passed', null],
    ]);
  });

  it("ends its run failed with the executor's own outcome when no retry is left", async () => {
    answers.set('/down', [500]);
    const runId = await runOfKind(KIND, { check: { path: '/down' } });
    const execution = await executeRun(depsWithThirdKind(), runId);
    expect(execution).toMatchObject({ kind: 'finished', status: 'failed', code: 'http_error' });
    expect(await db.run.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      status: 'failed',
      outcomeCode: 'http_error',
      resultSummary: 'Failed at step 1: answered HTTP 500.',
    });
  });

  it('is run by its kind, not by the form of its definition; a kind without an executor ends the run in error', async () => {
    // A step list under the third kind is still the third kind's: its executor refuses it.
    const listed = await runOfKind(KIND, [{ action: 'goto', url: '/' }]);
    expect(await executeRun(depsWithThirdKind(), listed)).toMatchObject({
      status: 'error',
      code: 'invalid_definition',
    });
    const unknown = await runOfKind('visual', { check: { path: '/flaky' } });
    expect(await executeRun(depsWithThirdKind(), unknown)).toMatchObject({ status: 'error', code: 'internal_error' });
    expect((await db.run.findUniqueOrThrow({ where: { id: unknown } })).outcomeMessage).toBe(
      'this worker has no executor for tests of kind "visual"',
    );
  });
});
