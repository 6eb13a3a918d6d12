/**
 * `testrun cancel`, `testrun rerun` and the cancel of what `testrun run` enqueued when its CI job
 * is cancelled (SIGINT/SIGTERM), against a real API process and a real worker process.
 */
import type { Db } from '@testrun/core/db';
import { parsed, wire } from '../api/typed';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { applySampleProject, createTenant, testDb } from '../support/harness';
import { freePort, runCli, startCli, startService, waitReady, type ServiceProcess } from './cli-harness';

jest.setTimeout(120_000);

let db: Db;
let site: FixtureSite;
let api: ServiceProcess;
let worker: ServiceProcess;
let apiUrl: string;
let tenant: Awaited<ReturnType<typeof createTenant>>;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  db = testDb();
  cleanups.push(() => db.$disconnect());
  site = await startFixtureSite();
  cleanups.push(() => site.close());
  tenant = await createTenant(db);
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
    slug: 'ci',
    name: 'CI',
    baseUrl: site.url,
    suites: [
      { slug: 'slow', name: 'Slow', tests: [slow('a'), slow('b'), slow('c')] },
      {
        slug: 'mixed',
        name: 'Mixed',
        tests: [
          { key: 'pass', name: 'Passes', steps: [{ action: 'goto', url: '/' }] },
          {
            key: 'fail',
            name: 'Fails',
            steps: [
              { action: 'goto', url: '/' },
              { action: 'expectText', selector: 'h1', text: 'Not the heading', timeoutMs: 500 },
            ],
          },
        ],
      },
    ],
  });
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  // The tests poll the API themselves, beside the CLI: no rate limit in their way.
  api = startService('api', {
    PORT: String(port),
    PUBLIC_BASE_URL: apiUrl,
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  worker = startService('worker', { WORKER_CONCURRENCY: '2', WORKER_VIDEO: 'off', LOG_LEVEL: 'info' });
  cleanups.push(() => Promise.all([api.stop(), worker.stop()]));
  await waitReady(`${apiUrl}/readyz`, api);
  await until(() => Promise.resolve(worker.output().includes('"message":"worker ready"')));
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const env = () => ({ TESTRUN_API_URL: apiUrl, TESTRUN_API_KEY: tenant.key });

async function suiteRun(id: string) {
  const res = await fetch(`${apiUrl}/api/v1/suite-runs/${id}`, { headers: { Authorization: `Bearer ${tenant.key}` } });
  return parsed(wire.suiteRun, await res.json());
}

/** Waits until `check` gives a value; the jest timeout bounds the wait. */
async function until<T>(check: () => Promise<T | null | undefined | false>): Promise<T> {
  for (;;) {
    const value = await check();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Starts `testrun run` of the slow suite and waits until it printed its suite run id and a child runs. */
async function startSlowRun(extra: string[] = []) {
  const cli = startCli(['run', '--project', 'ci', '--suite', 'slow', '--poll-interval', '300ms', ...extra], env());
  const id = await until(() => Promise.resolve(/Enqueued suite run (srun_\w+)/.exec(cli.output())?.[1]));
  await until(async () => (await suiteRun(id)).tests.some((t) => t.status === 'running'));
  return { ...cli, id };
}

describe('testrun run, its CI job cancelled', () => {
  it('SIGTERM cancels the suite run it enqueued, and exits 2', async () => {
    const cli = await startSlowRun();
    cli.child.kill('SIGTERM');
    const result = await cli.result;
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).toContain(`Received SIGTERM; cancelled ${cli.id}`);
    const ended = await until(async () => {
      const s = await suiteRun(cli.id);
      return s.status !== 'queued' && s.status !== 'running' && s;
    });
    expect(ended.tests.every((t) => t.status === 'skipped' || t.status === 'error')).toBe(true);
    expect(ended.error_count + ended.skipped_count).toBe(ended.total_count);
  });

  it('with --no-cancel-on-exit, SIGINT leaves it running; `testrun cancel SRUN` then cancels it', async () => {
    const cli = await startSlowRun(['--no-cancel-on-exit']);
    cli.child.kill('SIGINT');
    const result = await cli.result;
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).toContain('--no-cancel-on-exit');
    expect(await db.run.count({ where: { suiteRunId: cli.id, NOT: { cancelRequestedAt: null } } })).toBe(0);
    expect((await suiteRun(cli.id)).status).toBe('running');

    const cancel = await runCli(['cancel', cli.id, '--json'], env());
    expect(cancel.code).toBe(0);
    expect(parsed(wire.suiteRun, JSON.parse(cancel.stdout)).id).toBe(cli.id);
    const ended = await until(async () => {
      const s = await suiteRun(cli.id);
      return s.status !== 'queued' && s.status !== 'running' && s;
    });
    expect(ended.passed_count).toBe(0);

    const again = await runCli(['cancel', cli.id], env());
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`${cli.id} is ${ended.status}`);
  });

  it('`testrun cancel` refuses an id that is not one, and reports an unknown one as not_found', async () => {
    const bad = await runCli(['cancel', 'nope'], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('ID must be a run id');
    const unknown = await runCli(['cancel', 'run_unknown'], env());
    expect(unknown.code).toBe(2);
    expect(unknown.stdout + unknown.stderr).toContain('not_found');
  });
});

describe('testrun rerun', () => {
  it('--failed reruns the failed tests of a suite run, waits and reports like testrun run', async () => {
    const first = await runCli(
      ['run', '--project', 'ci', '--suite', 'mixed', '--poll-interval', '300ms', '--json'],
      env(),
    );
    expect(first.code).toBe(1);
    const original = parsed(wire.runReport, JSON.parse(first.stdout));
    const srun = original.suiteRunId ?? '';

    const rerun = await runCli(['rerun', srun, '--failed', '--poll-interval', '300ms', '--json'], env());
    expect(rerun.code).toBe(1);
    const report = parsed(wire.runReport, JSON.parse(rerun.stdout));
    expect(report.tests.map((t) => [t.name, t.status])).toEqual([['Fails', 'failed']]);
    expect((await suiteRun(report.suiteRunId ?? '')).rerun_of).toBe(srun);

    const usage = await runCli(['rerun', srun], env());
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('exactly one of --failed or --all');
  });
});
