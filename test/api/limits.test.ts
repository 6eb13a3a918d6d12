// Every cap of contracts' limits.ts, one row each: a request over a cap, sent over real HTTP to the
// API server, is a 4xx problem whose detail names the cap and its value and creates no run and no
// job; a project file over a cap is refused by applyProject (what `testrun admin project apply`
// calls), naming the cap, and changes nothing.
import { connect } from 'node:net';
import { AdminError, applyProject } from '../../packages/admin/src/operations';
import {
  capValue,
  HEADER_LIMITS,
  PROBLEMS,
  REQUEST_LIMITS,
  RETRY_LIMITS,
  STEP_LIMITS,
  VARIABLE_LIMITS,
  WORKERS_LIMITS,
  type ProblemCode,
  type ProjectFile,
  type Step,
} from '@testrun/contracts';
import { applySampleProject, createTenant, sampleProject } from '../support/harness';
import { jobIdsIn, serveTestApi, type TestApi } from './api-harness';
import { parsed, wire } from './typed';

let api: TestApi;
let port: number;
let closeServed: () => Promise<void>;
beforeAll(async () => {
  ({ api, port, close: closeServed } = await serveTestApi());
});
afterAll(() => closeServed());

type Answer = { status: number; head: string; body: string };

/** POSTs `body` to /api/v1/runs over one HTTP/1.1 connection and reads the whole answer. */
async function post(key: string, body: string, extraHeaders: string[] = []): Promise<Answer> {
  const head = [
    'POST /api/v1/runs HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    `Authorization: Bearer ${key}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...extraHeaders,
  ].join('\r\n');
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    socket.on('data', (c: Buffer) => (out += c.toString('utf8')));
    // A server that refuses early may reset the connection under the rest of the request.
    socket.on('error', (error) => (out ? resolve(out) : reject(error)));
    socket.on('close', () => resolve(out));
    socket.setTimeout(20_000, () => socket.destroy());
    socket.write(`${head}\r\n\r\n${body}`);
  });
  const [answerHead = '', answerBody = ''] = text.split('\r\n\r\n', 2);
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answerHead)?.[1] ?? 0), head: answerHead, body: answerBody };
}

const many = (n: number, value: (i: number) => string) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-H${i}`, value(i)]));
const vars = (n: number, value: string) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`V${i}`, value]));

type RequestCase = {
  cap: Parameters<typeof capValue>[0];
  code: ProblemCode;
  /** The project the body addresses (applied first): `shop` has one test, `big` one over the runs cap. */
  project?: 'shop' | 'big';
  body?: Record<string, unknown>;
  headers?: string[];
};

const requestCases: RequestCase[] = [
  {
    cap: 'REQUEST_LIMITS.maxBodyBytes',
    code: 'payload_too_large',
    body: { variables: { V: 'x'.repeat(REQUEST_LIMITS.maxBodyBytes) } },
  },
  {
    cap: 'REQUEST_LIMITS.maxHeaderCount',
    code: 'request_header_fields_too_large',
    headers: Array.from({ length: REQUEST_LIMITS.maxHeaderCount }, (_, i) => `X-Pad-${i}: ${i}`),
  },
  {
    cap: 'REQUEST_LIMITS.maxHeaderBytes',
    code: 'request_header_fields_too_large',
    headers: [`X-Pad: ${'p'.repeat(REQUEST_LIMITS.maxHeaderBytes)}`],
  },
  { cap: 'REQUEST_LIMITS.maxRunsPerRequest', code: 'too_many_runs', project: 'big' },
  {
    cap: 'HEADER_LIMITS.maxHeaders',
    code: 'limit_exceeded',
    body: { headers: many(HEADER_LIMITS.maxHeaders + 1, String) },
  },
  {
    cap: 'HEADER_LIMITS.maxNameLength',
    code: 'limit_exceeded',
    body: { headers: { [`X-${'n'.repeat(HEADER_LIMITS.maxNameLength)}`]: 'v' } },
  },
  {
    cap: 'HEADER_LIMITS.maxValueLength',
    code: 'limit_exceeded',
    body: { headers: { 'X-Long': 'v'.repeat(HEADER_LIMITS.maxValueLength + 1) } },
  },
  {
    cap: 'HEADER_LIMITS.maxTotalBytes',
    code: 'limit_exceeded',
    body: {
      headers: many(Math.ceil(HEADER_LIMITS.maxTotalBytes / HEADER_LIMITS.maxValueLength) + 1, () =>
        'v'.repeat(HEADER_LIMITS.maxValueLength - 16),
      ),
    },
  },
  {
    cap: 'VARIABLE_LIMITS.maxVariables',
    code: 'limit_exceeded',
    body: { variables: vars(VARIABLE_LIMITS.maxVariables + 1, 'x') },
  },
  {
    cap: 'VARIABLE_LIMITS.maxValueLength',
    code: 'limit_exceeded',
    body: { secretVariables: { S: 's'.repeat(VARIABLE_LIMITS.maxValueLength + 1) } },
  },
  {
    cap: 'VARIABLE_LIMITS.maxTotalBytes',
    code: 'limit_exceeded',
    body: {
      variables: vars(
        VARIABLE_LIMITS.maxTotalBytes / VARIABLE_LIMITS.maxValueLength + 1,
        'x'.repeat(VARIABLE_LIMITS.maxValueLength),
      ),
    },
  },
  {
    cap: 'RETRY_LIMITS.maxRetries',
    code: 'limit_exceeded',
    body: { retries: RETRY_LIMITS.maxRetries + 1 },
  },
  {
    cap: 'WORKERS_LIMITS.maxWorkers',
    code: 'limit_exceeded',
    body: { workers: WORKERS_LIMITS.maxWorkers + 1 },
  },
];

describe('a request over a cap', () => {
  it.each(requestCases.map((c) => [c.cap, c] as const))(
    '%s: a 4xx problem naming the cap and its value; no run, no job',
    async (cap, c) => {
      const t = await createTenant(api.db, { maxActiveRuns: 100_000, monthlyRuns: 100_000 });
      const slug = c.project ?? 'shop';
      // One test over the cap, in as few suites as a suite's own cap allows.
      const suites = Math.ceil((REQUEST_LIMITS.maxRunsPerRequest + 1) / STEP_LIMITS.maxTestsPerSuite) + 1;
      const perSuite = Math.ceil((REQUEST_LIMITS.maxRunsPerRequest + 1) / suites);
      await applySampleProject(
        api.db,
        t.workspace.id,
        slug === 'big'
          ? sampleProject('big', { count: perSuite, suites: Array.from({ length: suites }, (_, i) => `s${i}`) })
          : sampleProject('shop', { count: 1 }),
      );
      const jobsBefore = await jobIdsIn(api.queue);
      const answer = await post(t.key, JSON.stringify({ projectSlug: slug, ...c.body }), c.headers);

      expect(answer.status).toBe(PROBLEMS[c.code].status);
      expect(answer.head).toMatch(/content-type: application\/problem\+json/i);
      const problem = parsed(wire.problem, JSON.parse(answer.body));
      expect(problem.code).toBe(c.code);
      expect(problem.detail).toContain(`limit ${cap} = ${String(capValue(cap))}`);
      expect(await api.db.run.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
      expect(await api.db.suiteRun.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
      expect(await jobIdsIn(api.queue)).toEqual(jobsBefore);
    },
  );

  it('a body with a cap and another fault is 400 invalid_body, listing both', async () => {
    const t = await createTenant(api.db);
    const body = { projectSlug: 'shop', extra: 1, headers: many(HEADER_LIMITS.maxHeaders + 1, String) };
    const answer = await post(t.key, JSON.stringify(body));
    const problem = parsed(wire.problem, JSON.parse(answer.body));
    expect([answer.status, problem.code]).toEqual([400, 'invalid_body']);
    expect(problem.detail).toContain(`limit HEADER_LIMITS.maxHeaders = ${String(HEADER_LIMITS.maxHeaders)}`);
    expect(problem.detail).toContain('/extra is not an allowed field');
  });
});

const steps = (n: number): Step[] => Array.from({ length: n }, () => ({ action: 'goto', url: '/' }));

/** A one-test project whose test is `test` (over a cap in one way). */
function withTest(test: Partial<ProjectFile['suites'][number]['tests'][number]>): ProjectFile {
  const file = sampleProject('capped', { count: 1 });
  const [suite] = file.suites;
  const [first] = suite?.tests ?? [];
  if (!suite || !first) throw new Error('sampleProject has one suite with one test');
  return { ...file, suites: [{ ...suite, tests: [{ ...first, ...test }] }] };
}

const projectCases: [Parameters<typeof capValue>[0], ProjectFile][] = [
  ['STEP_LIMITS.maxStepsPerTest', withTest({ steps: steps(STEP_LIMITS.maxStepsPerTest + 1) })],
  ['STEP_LIMITS.maxTestsPerSuite', sampleProject('capped', { count: STEP_LIMITS.maxTestsPerSuite + 1 })],
  [
    'STEP_LIMITS.maxSuitesPerProject',
    sampleProject('capped', {
      count: 1,
      suites: Array.from({ length: STEP_LIMITS.maxSuitesPerProject + 1 }, (_, i) => `s${i}`),
    }),
  ],
  ['STEP_LIMITS.maxWaitMs', withTest({ steps: [{ action: 'wait', ms: STEP_LIMITS.maxWaitMs + 1 }] })],
  [
    'STEP_LIMITS.maxStepTimeoutMs',
    withTest({ steps: [{ action: 'goto', url: '/', timeoutMs: STEP_LIMITS.maxStepTimeoutMs + 1 }] }),
  ],
  ['STEP_LIMITS.maxTestTimeoutMs', withTest({ timeoutMs: STEP_LIMITS.maxTestTimeoutMs + 1 })],
  ['RETRY_LIMITS.maxRetries', withTest({ retries: RETRY_LIMITS.maxRetries + 1 })],
];

describe('a project file over a cap', () => {
  it.each(projectCases)(
    '%s: refused when applied, naming the cap and its value; nothing changes',
    async (cap, file) => {
      const t = await createTenant(api.db);
      const error = await applyProject(api.db, t.workspace.id, file).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AdminError);
      const refused = error as AdminError;
      expect(refused.message).toBe('the project file is over a limit');
      expect(refused.errors.map((e) => e.message)).toContainEqual(
        expect.stringContaining(`limit ${cap} = ${String(capValue(cap))}`),
      );
      expect(await api.db.project.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
      expect(await api.db.test.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
    },
  );
});
