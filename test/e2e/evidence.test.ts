import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EvidenceSettings, ProjectFile, Run } from '@testrun/contracts';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { createTenant, testDb } from '../support/harness';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { present } from '../support/present';
import { apiClient, memoryLogger, startApi, zipEntryText } from './support';

/**
 * The evidence policy end to end: the API resolves it at enqueue (request > test > project >
 * default), the worker (real Chromium) records and keeps what it says, and GET run shows it. Five
 * runs in all; every case reads what was stored for its run.
 */
jest.setTimeout(90_000);

let db: Db;
let site: FixtureSite;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: WorkerService;
let client: ReturnType<typeof apiClient>;
let apiKey: string;
let workspaceId: string;

const STEPS: ProjectFile['suites'][number]['tests'][number]['steps'] = [
  { action: 'goto', url: '/' },
  { action: 'expectText', selector: 'h1', text: 'Testrun Shop' },
];
const FAILING: typeof STEPS = [
  { action: 'goto', url: '/' },
  { action: 'fill', selector: '#name', value: 'Ada' },
  { action: 'expectText', selector: 'h1', text: 'Welcome to the shop', timeoutMs: 1_000 },
];

/** A project of one suite; `evidence` at project level and per test as given. */
function project(
  slug: string,
  evidence: EvidenceSettings | undefined,
  tests: Array<{ key: string; steps: typeof STEPS; evidence?: EvidenceSettings }>,
): ProjectFile {
  return {
    slug,
    name: slug,
    baseUrl: site.url,
    ...(evidence ? { evidence } : {}),
    suites: [{ slug: 'main', name: 'Main', tests: tests.map((t) => ({ ...t, name: t.key })) }],
  };
}

beforeAll(async () => {
  db = testDb();
  site = await startFixtureSite();
  api = await startApi();
  worker = await startWorkerService(readWorkerConfig({ ...process.env, WORKER_CONCURRENCY: '2' }), {
    logger: memoryLogger('worker').logger,
    reconcile: false,
  });
  const tenant = await createTenant(db);
  workspaceId = tenant.workspace.id;
  apiKey = tenant.key;
  client = apiClient(api.url, tenant.key);
  await applyProject(
    db,
    workspaceId,
    project('plain', undefined, [
      { key: 'passes', steps: STEPS },
      { key: 'fails', steps: FAILING },
    ]),
  );
  // The project keeps traces of every run and no screenshots; its one test wants screenshots back.
  await applyProject(
    db,
    workspaceId,
    project('layered', { trace: 'on', screenshots: 'off' }, [
      { key: 'own-screenshots', steps: STEPS, evidence: { screenshots: 'on' } },
    ]),
  );
});

afterAll(async () => {
  await worker.stop();
  await api.close();
  await site.close();
  await db.$disconnect();
});

async function testId(key: string): Promise<string> {
  return (await db.test.findFirstOrThrow({ where: { workspaceId, key }, select: { id: true } })).id;
}

/** What a run stored: its steps' outcomes, the step index of each screenshot, and its other artifacts' kinds. */
async function stored(runId: string) {
  const [steps, artifacts] = await Promise.all([
    db.stepResult.findMany({ where: { runId }, orderBy: { index: 'asc' } }),
    db.artifact.findMany({ where: { runId }, orderBy: { stepIndex: 'asc' } }),
  ]);
  const shots = artifacts.filter((a) => a.kind === 'screenshot');
  for (const step of steps) {
    const own = shots.find((a) => a.stepIndex === step.index);
    expect(step.screenshotId).toBe(own?.id ?? null);
  }
  return {
    steps: steps.map((s) => s.outcome),
    screenshots: shots.map((a) => a.stepIndex),
    files: artifacts
      .filter((a) => a.kind !== 'screenshot')
      .map((a) => a.kind)
      .sort(),
  };
}

/** The kinds of event in a run's stored trace (`frame-snapshot` for DOM snapshots, `screencast-frame`…). */
async function traceEventTypes(runId: string): Promise<Set<string>> {
  const trace = await db.artifact.findFirstOrThrow({ where: { runId, kind: 'trace' } });
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'evidence-trace-')), 'trace.zip');
  await writeFile(file, present(await worker.store.get(trace.storageKey), 'the stored trace'));
  const lines = zipEntryText(file, 'trace.trace').split('\n').filter(Boolean);
  await rm(path.dirname(file), { recursive: true, force: true });
  return new Set(lines.map((line) => (JSON.parse(line) as { type: string }).type));
}

/** The HTML of a run's view page, from the Link header of GET run (served by the same API). */
async function viewPage(runId: string): Promise<string> {
  const res = await fetch(`${api.url}/api/v1/runs/${runId}`, { headers: { authorization: `Bearer ${apiKey}` } });
  const link = present(/<([^>]+)>/.exec(res.headers.get('link') ?? '')?.[1], 'the view link');
  const url = new URL(link);
  return (await fetch(`${api.url}${url.pathname}${url.search}`)).text();
}

describe('the default policy', () => {
  let passed: Run;
  let failed: Run;

  beforeAll(async () => {
    const suite = await client.waitSuiteRun(await client.createSuiteRun({ projectSlug: 'plain', suiteSlug: 'main' }));
    const [first, second] = await Promise.all(suite.tests.map((t) => client.getRun(t.runId)));
    passed = present(first, 'the passing run');
    failed = present(second, 'the failing run');
  });

  it('is resolved at enqueue and shown by GET run', () => {
    expect([passed.status, failed.status]).toEqual(['passed', 'failed']);
    const expected = { trace: 'on-failure', video: 'off', screenshots: 'on-failure' };
    expect(passed.evidence).toEqual(expected);
    expect(failed.evidence).toEqual(expected);
  });

  it('keeps only the steps of a passing run: no trace, video or screenshot', async () => {
    expect(await stored(passed.id)).toEqual({ steps: ['passed', 'passed'], screenshots: [], files: [] });
    // Nothing was left behind on the worker's disk either.
    expect((await readdir(worker.scratchDir)).filter((f) => f.startsWith(passed.id))).toEqual([]);
  });

  it('keeps for a failing run its steps, the failing step’s screenshot and a trace', async () => {
    expect(await stored(failed.id)).toEqual({
      steps: ['passed', 'passed', 'failed'],
      screenshots: [3],
      files: ['trace'],
    });
    // An on-failure trace shows the page at every action through DOM snapshots, without the screencast.
    const types = await traceEventTypes(failed.id);
    expect(types.has('frame-snapshot')).toBe(true);
    expect(types.has('screencast-frame')).toBe(false);
  });

  it('leaves the view sensible: the steps without screenshots, the failure callout with its screenshot', async () => {
    const pass = await viewPage(passed.id);
    expect(pass.match(/<tr\s+class="step step-passed"/g)).toHaveLength(2);
    expect(pass).toContain('No recording was kept for this run.');
    expect(pass).not.toContain('<img');
    const fail = await viewPage(failed.id);
    expect(fail).toMatch(/class="callout callout-failed"[\s\S]*class="callout-shot"[\s\S]*\(step 3\)/);
    expect(fail).toContain('Open the Playwright trace');
  });
});

it('a request asking for everything keeps everything of a passing run', async () => {
  const all = { trace: 'on', video: 'on', screenshots: 'on' } as const;
  const run = await client.waitRun(await client.createRun({ testId: await testId('passes'), evidence: all }));
  expect([run.status, run.evidence]).toEqual(['passed', all]);
  // The video needs the worker's encoder (WORKER_VIDEO); without one a run is kept without video.
  expect(await stored(run.id)).toEqual({
    steps: ['passed', 'passed'],
    screenshots: [1, 2],
    files: worker.recordVideo ? ['trace', 'video'] : ['trace'],
  });
  // A trace that is `on` records the screencast too.
  const types = await traceEventTypes(run.id);
  expect(types.has('frame-snapshot') && types.has('screencast-frame')).toBe(true);
});

it("a test's settings override its project's, key by key", async () => {
  const { runIds } = await createProjectRuns('layered');
  const run = await client.waitRun(present(runIds[0], 'the run of the layered project'));
  // trace from the project, screenshots from the test (over the project's off), video the default.
  expect([run.status, run.evidence]).toEqual(['passed', { trace: 'on', video: 'off', screenshots: 'on' }]);
  expect(await stored(run.id)).toEqual({ steps: ['passed', 'passed'], screenshots: [1, 2], files: ['trace'] });
});

it("a request's settings override its test's", async () => {
  const id = await testId('own-screenshots');
  const evidence = { screenshots: 'off', video: 'on-failure' } as const;
  const run = await client.waitRun(await client.createRun({ testId: id, evidence }));
  expect([run.status, run.evidence]).toEqual(['passed', { trace: 'on', video: 'on-failure', screenshots: 'off' }]);
  // The video of a passing run was recorded (when the worker can) and dropped.
  expect(await stored(run.id)).toEqual({ steps: ['passed', 'passed'], screenshots: [], files: ['trace'] });
});

it('refuses a bad mode or an unknown key naming the field, and creates nothing', async () => {
  const before = await db.run.count({ where: { workspaceId } });
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{ testId: await testId('passes'), evidence: { trace: 'always' } }, '/evidence/trace', 'must be one of'],
    [{ projectSlug: 'plain', suiteSlug: 'main', evidence: { audio: 'on' } }, '/evidence/audio', 'is not an allowed'],
    [{ projectSlug: 'plain', evidence: { video: 'on-first-retry' } }, '/evidence/video', 'must be one of'],
    [{ projectSlug: 'plain', evidence: 'on' }, '/evidence', 'must be object'],
  ];
  for (const [body, path, message] of cases) {
    const res = await post(body);
    const problem = res.body as { code?: string; errors?: Array<{ path: string; message: string }> };
    expect([res.status, problem.code, problem.errors?.map((e) => e.path)]).toEqual([400, 'invalid_body', [path]]);
    expect(problem.errors?.[0]?.message).toContain(message);
  }
  expect(await db.run.count({ where: { workspaceId } })).toBe(before);
});

async function post(body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${api.url}/api/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

async function createProjectRuns(projectSlug: string): Promise<{ runIds: string[] }> {
  const res = await post({ projectSlug });
  expect(res.status).toBe(201);
  return res.body as { runIds: string[] };
}
