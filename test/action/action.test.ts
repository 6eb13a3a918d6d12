/**
 * The GitHub Action end to end: its committed bundle run with plain node and the environment the
 * runner gives a JavaScript action, against a real API process and a real worker (real Postgres,
 * Redis and Chromium) testing the fixture site.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { stringify } from 'yaml';
import type { Db } from '@testrun/core/db';
import type { ProjectFile } from '@testrun/contracts';
import { freePort, protectedPreviewTest, startService, waitReady, type ServiceProcess } from '../cli/cli-harness';
import { PROTECTED_CREDENTIALS, startFixtureSite, type FixtureSite } from '../fixtures/site';
import { applySampleProject, createTenant, testDb } from '../support/harness';
import { REPO_ROOT } from '../support/processes';
import { readActionYml, runActionStep, type StepResult } from './action-harness';

jest.setTimeout(90_000);

const CREDENTIALS = Buffer.from(`${PROTECTED_CREDENTIALS.username}:${PROTECTED_CREDENTIALS.password}`).toString(
  'base64',
);
const BASIC = `Basic ${CREDENTIALS}`;
const BYPASS = 'bypass-token-0123';

function projectFile(site: string): ProjectFile {
  const home = {
    key: 'home',
    name: 'Home page',
    timeoutMs: 15_000,
    steps: [
      { action: 'goto' as const, url: '/' },
      { action: 'expectText' as const, selector: 'h1', text: 'Testrun Shop', timeoutMs: 3_000 },
    ],
  };
  return {
    slug: 'shop',
    name: 'Action shop',
    baseUrl: site,
    suites: [
      {
        slug: 'pass',
        name: 'Pass',
        tests: [home, protectedPreviewTest()],
      },
      {
        slug: 'fail',
        name: 'Fail',
        tests: [
          home,
          {
            key: 'mismatch',
            name: 'Heading says <Welcome> & "hello"',
            timeoutMs: 15_000,
            steps: [
              { action: 'goto', url: '/' },
              { action: 'expectText', selector: 'h1', text: 'Welcome', timeoutMs: 1_000 },
            ],
          },
          { key: 'disabled', name: 'Disabled test', enabled: false, steps: [{ action: 'goto', url: '/' }] },
        ],
      },
    ],
  };
}

let db: Db;
let site: FixtureSite;
let api: ServiceProcess;
let worker: ServiceProcess;
let apiUrl: string;
let tenant: Awaited<ReturnType<typeof createTenant>>;
const dir = mkdtempSync(path.join(tmpdir(), 'testrun-action-test-'));
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  db = testDb();
  cleanups.push(() => db.$disconnect());
  site = await startFixtureSite();
  cleanups.push(() => site.close());
  tenant = await createTenant(db);
  await applySampleProject(db, tenant.workspace.id, projectFile(site.url));
  apiUrl = `http://127.0.0.1:${await freePort()}`;
  api = startService('api', { PORT: new URL(apiUrl).port, PUBLIC_BASE_URL: apiUrl, LOG_LEVEL: 'info' });
  worker = startService('worker', { WORKER_CONCURRENCY: '2', WORKER_VIDEO: 'off', LOG_LEVEL: 'warn' });
  cleanups.push(() => Promise.all([api.stop(), worker.stop()]));
  await waitReady(`${apiUrl}/readyz`, api);
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A workflow run of its own per call: the derived idempotency key never replays another test's enqueue. */
const workflow = () => ({
  GITHUB_REPOSITORY: 'acme/shop',
  GITHUB_RUN_ID: `${Date.now()}${Math.floor(Math.random() * 1000)}`,
  GITHUB_RUN_ATTEMPT: '1',
  GITHUB_JOB: 'e2e',
  GITHUB_ACTION: 'testrun',
});
const inputs = (extra: Record<string, string>) => ({
  'api-url': apiUrl,
  'api-key': tenant.key,
  project: 'shop',
  'poll-interval': '300ms',
  ...extra,
});

/** Everything the step printed or wrote, except the `::add-mask::` commands that carry the secrets to the runner. */
function unmasked(step: StepResult, ...files: string[]): string {
  const log = step.log
    .split('\n')
    .filter((line) => !line.startsWith('::add-mask::'))
    .join('\n');
  return [log, step.files, ...files.map((f) => readFileSync(f, 'utf8'))].join('\n');
}

describe('GitHub Action: action.yml', () => {
  it('is a node24 JavaScript action whose committed bundle is main and post, keeping the inputs and outputs workflows name', () => {
    const action = readActionYml();
    expect(action.runs).toEqual({
      using: 'node24',
      main: 'packages/action/dist/index.js',
      post: 'packages/action/dist/index.js',
      'post-if': 'always()',
    });
    expect(existsSync(path.join(REPO_ROOT, action.runs.main))).toBe(true);
    expect(Object.keys(action.inputs)).toEqual(
      expect.arrayContaining([
        ...['api-url', 'api-key', 'test', 'project', 'suite', 'base-url', 'headers', 'timeout', 'poll-interval'],
        ...['junit', 'trace', 'video', 'screenshots', 'idempotency-key', 'idempotency-scope', 'fail-on'],
        ...['file', 'deploy'],
      ]),
    );
    expect(Object.keys(action.outputs)).toEqual(
      expect.arrayContaining([
        ...['status', 'suite-run-url', 'exit-code', 'total', 'passed', 'failed', 'error', 'skipped', 'flaky'],
        ...['deployment-id', 'version'],
      ]),
    );
  });
});

describe('GitHub Action: the bundle against the real API', () => {
  it('fails the step on a failing suite, masks the key and header values, sets outputs, summary, JUnit and state', async () => {
    const junit = path.join(dir, 'fail.xml');
    const step = await runActionStep(
      inputs({ suite: 'fail', headers: `Authorization: ${BASIC}\nX-Bypass: ${BYPASS}`, junit, trace: 'off' }),
      { env: workflow() },
    );
    expect(step.code).toBe(1);
    expect(step.outputs).toMatchObject({
      status: 'failed',
      'exit-code': '1',
      total: '3',
      passed: '1',
      failed: '1',
      error: '0',
      skipped: '1',
      queued: '0',
      running: '0',
      flaky: '0',
    });
    const url = step.outputs['suite-run-url'] ?? '';
    expect(url).toMatch(new RegExp(`^${apiUrl}/view/suite-runs/srun_`));
    expect(step.log).toMatch(/^::error::Testrun failed: The suite failed/m);

    expect(step.summary).toContain('Testrun: ❌ failed');
    expect(step.summary).toContain('Heading says &lt;Welcome&gt; &amp; &quot;hello&quot;');
    expect(step.summary).toContain(`<a href="${url}">Open the detailed view</a>`);
    expect(step.summary).toMatch(/<td>1<\/td><td>1<\/td><td>0<\/td><td>1<\/td><td>3<\/td>/);

    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(
      readFileSync(junit, 'utf8'),
    ) as { testsuites: { testsuite: Record<string, string> } };
    expect(xml.testsuites.testsuite).toMatchObject({ name: 'shop/fail', tests: '3', failures: '1', skipped: '1' });

    // The post step gets what was enqueued, saved as soon as the API answered.
    const suiteRunId = /srun_\w+/.exec(url)?.[0];
    expect(JSON.parse(step.state.enqueued ?? '')).toEqual({ suiteRunId, runIds: [] });

    // Masked before anything else is printed; nowhere else in the log or the runner's files.
    for (const secret of [tenant.key, BASIC, CREDENTIALS, BYPASS]) expect(step.log).toContain(`::add-mask::${secret}`);
    const firstOther = step.log.split('\n').findIndex((line) => !line.startsWith('::add-mask::'));
    expect(step.log.split('\n').slice(firstOther).join('\n')).not.toContain('::add-mask::');
    const everything = unmasked(step, junit);
    for (const secret of [tenant.key, BASIC, CREDENTIALS, BYPASS]) expect(everything).not.toContain(secret);
  });

  it('passes the step on a passing suite whose protected page needs the header', async () => {
    const step = await runActionStep(inputs({ suite: 'pass', headers: `Authorization: ${BASIC}` }), {
      env: workflow(),
    });
    expect(step.code).toBe(0);
    expect(step.outputs).toMatchObject({ status: 'passed', 'exit-code': '0', total: '2', passed: '2', failed: '0' });
    expect(step.summary).toContain('Testrun: ✅ passed');
    expect(step.log).not.toContain('::error');
  });

  it('post step: cancels what the unfinished main step enqueued, from its saved state', async () => {
    const slow = (key: string) => ({
      key,
      name: `Slow ${key}`,
      timeoutMs: 120_000,
      steps: [
        { action: 'goto' as const, url: '/' },
        { action: 'wait' as const, ms: 30_000 },
        { action: 'wait' as const, ms: 30_000 },
      ],
    });
    await applySampleProject(db, tenant.workspace.id, {
      slug: 'slowshop',
      name: 'Slow shop',
      baseUrl: site.url,
      suites: [{ slug: 'slow', name: 'Slow', tests: [slow('a'), slow('b'), slow('c')] }],
    });
    const api = (method: string, p: string, body?: unknown) =>
      fetch(`${apiUrl}${p}`, {
        method,
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then((r) => r.json() as Promise<Record<string, unknown>>);
    const { suiteRunId } = await api('POST', '/api/v1/runs', { projectSlug: 'slowshop', suiteSlug: 'slow' });
    const state = { isPost: 'true', enqueued: JSON.stringify({ suiteRunId, runIds: [] }) };
    const step = await runActionStep(inputs({}), { env: workflow(), state, post: true });
    expect(step.code).toBe(0);
    expect(step.log).toMatch(
      new RegExp(`^::notice title=Testrun runs cancelled::.*suite run ${String(suiteRunId)}`, 'm'),
    );
    expect(unmasked(step)).not.toContain(tenant.key);
    // Every child ends cancelled: skipped if it had not started, error (cancelled) if it had.
    for (;;) {
      const s = await api('GET', `/api/v1/suite-runs/${String(suiteRunId)}`);
      if (s.status !== 'queued' && s.status !== 'running') {
        const tests = s.tests as Array<{ status: string; skipReason: string | null }>;
        expect(
          tests.every((t) => t.status === 'error' || (t.status === 'skipped' && t.skipReason === 'cancelled')),
        ).toBe(true);
        break;
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  });

  it('post step: does nothing after a main step that finished, and says when nothing was enqueued', async () => {
    const enqueued = JSON.stringify({ suiteRunId: 'srun_finished', runIds: [] });
    const finished = await runActionStep(inputs({ suite: 'pass' }), {
      env: workflow(),
      state: { isPost: 'true', finished: 'true', enqueued },
      post: true,
    });
    expect(finished.code).toBe(0);
    expect(finished.log).not.toContain('srun_finished');
    const nothing = await runActionStep(inputs({ suite: 'pass' }), {
      env: workflow(),
      state: { isPost: 'true' },
      post: true,
    });
    expect(nothing.code).toBe(0);
    expect(nothing.log).toContain('cancelled before this step enqueued anything');
  });

  it('refuses a bad input before any request, naming the input; still sets the outputs', async () => {
    const step = await runActionStep(inputs({ suite: 'pass', video: 'sometimes' }), { env: workflow() });
    expect(step.code).toBe(1);
    expect(step.outputs).toMatchObject({ status: 'error', 'exit-code': '2', total: '0' });
    expect(step.log).toMatch(/^::error::Testrun error: Input refused: video must be one of on, on-failure, off/m);
    expect(step.log).toContain(`::add-mask::${tenant.key}`);
    expect(unmasked(step)).not.toContain(tenant.key);
  });

  it('reports an API refusal as api_error, and with fail-on: never only warns', async () => {
    const step = await runActionStep(
      inputs({ suite: 'pass', 'api-key': 'trk_not-a-real-key-000', 'fail-on': 'never' }),
      {
        env: workflow(),
      },
    );
    expect(step.code).toBe(0);
    expect(step.outputs).toMatchObject({ status: 'api_error', 'exit-code': '2' });
    expect(step.log).toMatch(/^::warning title=Testrun api_error::The API refused the request: /m);
    expect(step.summary).toContain('Testrun: ⚠️ api_error');
    expect(unmasked(step)).not.toContain('trk_not-a-real-key-000');
  });

  it('file: deploys a preview of the project file and runs it; deploy: true activates it', async () => {
    const team = await createTenant(db, { scopes: ['run', 'preview', 'deploy'] });
    const file = path.join(dir, 'shop.yaml');
    const shop = projectFile(site.url);
    writeFileSync(file, stringify({ ...shop, suites: shop.suites.filter((s) => s.slug === 'pass') }));
    const preview = await runActionStep(
      inputs({ 'api-key': team.key, project: '', file, suite: 'pass', headers: `Authorization: ${BASIC}` }),
      { env: workflow() },
    );
    expect(preview.code).toBe(0);
    expect(preview.outputs).toMatchObject({ status: 'passed', total: '2', passed: '2', version: '1' });
    const deploymentId = preview.outputs['deployment-id'] ?? '';
    expect(preview.log).toContain(`Deployed a preview of shop: version 1 (${deploymentId})`);
    const suiteRunId = /srun_\w+/.exec(preview.outputs['suite-run-url'] ?? '')?.[0] ?? '';
    expect(await db.suiteRun.findUniqueOrThrow({ where: { id: suiteRunId } })).toMatchObject({ deploymentId });
    const project = await db.project.findFirstOrThrow({ where: { workspaceId: team.workspace.id, slug: 'shop' } });
    const stored = await db.deployment.findMany({ where: { projectId: project.id }, select: { version: true } });
    expect(stored).toEqual([{ version: 1 }]);

    const deployed = await runActionStep(
      inputs({
        'api-key': team.key,
        project: '',
        file,
        deploy: 'true',
        suite: 'pass',
        headers: `Authorization: ${BASIC}`,
      }),
      { env: workflow() },
    );
    expect(deployed.code).toBe(0);
    expect(deployed.outputs).toMatchObject({ status: 'passed', version: '2' });
    expect(deployed.log).toContain(`Deployed and activated shop: version 2 (${deployed.outputs['deployment-id']})`);
    expect(unmasked(deployed)).not.toContain(team.key);
  });

  it('file: an invalid project file fails the step with an annotation at the offending line', async () => {
    const team = await createTenant(db, { scopes: ['run', 'preview'] });
    const file = path.join(dir, 'invalid.yaml');
    writeFileSync(
      file,
      [
        'slug: shop',
        'name: Shop',
        `baseUrl: ${site.url}`,
        'suites:',
        '  - slug: smoke',
        '    name: Smoke',
        '    tests:',
        '      - key: home',
        '        name: Home',
        '        steps:',
        '          - action: teleport',
        '',
      ].join('\n'),
    );
    const step = await runActionStep(inputs({ 'api-key': team.key, project: '', file }), { env: workflow() });
    expect(step.code).toBe(1);
    expect(step.outputs).toMatchObject({ status: 'api_error', total: '0' });
    expect(step.log).toMatch(
      new RegExp(
        `^::error title=Testrun project file,file=${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')},line=11,col=\\d+::`,
        'm',
      ),
    );
  });
});
