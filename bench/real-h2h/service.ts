/**
 * The service's side of the head-to-head on a real suite: a private stack (bench/h2h/service.ts)
 * with one worker of K slots, the repository deployed once (`testrun deploy`, as the parity harness
 * does), the worker warmed by one suite run that is not measured, then one suite run per round,
 * POSTed and followed to its end at the project's default evidence, in the sandbox, under the
 * network policy (TARGET_ALLOW opens the app's port only). CPU is that of the API, the worker and
 * everything they start (sandboxes, browsers), accounted by a control group, plus the Postgres
 * backends of the bench's database.
 */
import path from 'node:path';
import { isPlaywrightDefinition } from '@testrun/contracts';
import { CpuGroup, treeCpuMs } from '../h2h/cpu';
import { startBenchService } from '../h2h/service';
import { placeholderProject } from '../playwright/service';
import { cli, siteRule, type StackSuite } from '../parity/service-side';
import { startupOf, type StartupTimes } from './startup';

/** One test of a round: its key (file › project › titles), status, and its tries' duration summed. */
export interface TestTime {
  key: string;
  status: string;
  durationMs: number;
}

export interface Round {
  wallMs: number;
  cpuMs: number;
  /** Tests that passed (a retried test that passed counts once). */
  passed: number;
  tests: TestTime[];
  /** From the start (the POST; spawning playwright test) to the first test's first step, and to the first test's result. */
  firstTestMs?: number;
  firstResultMs?: number;
  /** The service's start-up by stage, when its worker logs at `info` (startup.ts). */
  startup?: StartupTimes;
}

/** The key of a test on both sides: its spec file relative to the repository, project, title path. */
export function testKey(repo: string, file: string, project: string, titlePath: readonly string[]): string {
  return [path.relative(repo, file), project, ...titlePath].join(' › ');
}

/**
 * Starts the stack, deploys with `deploy` (which puts the project file in place around the CLI's
 * deploy), warms the worker and returns `round()`, one timed suite run, and `close()`.
 */
export async function startWarmService(
  options: StackSuite & {
    repo: string;
    /** The request's `evidence`, when given (else the service's defaults). */
    evidence?: Record<string, string>;
  },
) {
  const bench = await startBenchService('real_h2h', placeholderProject('real-h2h-placeholder'), {
    scopes: ['deploy'],
    targetAllow: siteRule(options.baseUrl),
  });
  const group = CpuGroup.create(`testrun-real-h2h-${process.pid}`);
  const apiPid = bench.api.child.pid ?? 0;
  group?.add(apiPid);
  const worker = bench.spawnWorker(options.slots, options.workerEnv);
  const workerPid = worker.child.pid ?? 0;
  group?.add(workerPid);
  const close = async () => {
    worker.child.kill('SIGTERM');
    await worker.exited;
    await bench.close();
    await group?.remove();
  };
  try {
    const env = { TESTRUN_API_URL: bench.apiUrl, TESTRUN_API_KEY: bench.key };
    const cwd = path.dirname(options.projectFile);
    const deployed = await options.deploy(() => cli(['deploy', '--file', options.projectFile], cwd, env));
    if (deployed.code !== 0) throw new Error(`testrun deploy exited ${deployed.code}:\n${deployed.output}`);
    // `workers: K`, as `playwright test --workers=K` overrides the config's own `workers`.
    const request = {
      baseUrl: options.baseUrl,
      workers: options.slots,
      ...(options.evidence ? { evidence: options.evidence } : {}),
      ...(Object.keys(options.variables).length ? { variables: options.variables } : {}),
    };
    // Warm: one suite run, not measured, launches and fills what later runs reuse (browser, caches).
    // (A run of one test by testId hung on IT Tools: its sandbox started Chromium with Firefox's arguments.)
    const suite = { projectSlug: options.projectSlug, suiteSlug: options.suiteSlug, ...request };
    await bench.suiteTerminal(await bench.post(suite));

    const round = async (): Promise<Round> => {
      const pgBefore = await bench.backendPids();
      const cpu = () => group?.usageMs() ?? treeCpuMs([apiPid, workerPid]);
      const cpuBefore = cpu() + treeCpuMs([], pgBefore);
      const sent = Date.now();
      const id = await bench.post(suite);
      const row = await bench.suiteTerminal(id);
      const pgAfter = await bench.backendPids();
      const cpuMs = cpu() + treeCpuMs([], [...new Set([...pgBefore, ...pgAfter])]) - cpuBefore;
      const runs = await bench.db.run.findMany({
        where: { suiteRunId: id },
        orderBy: [{ position: 'asc' }, { retry: 'asc' }],
        select: { status: true, durationMs: true, steps: true },
      });
      const tests = new Map<string, TestTime>();
      for (const run of runs) {
        if (!isPlaywrightDefinition(run.steps)) continue;
        const pw = run.steps.playwright;
        const key = testKey(options.repo, path.resolve(cwd, pw.file), pw.project, pw.titlePath);
        const before = tests.get(key);
        // A retry is a run of its own: the test's time is its tries' sum, its status the last try's.
        tests.set(key, { key, status: run.status, durationMs: (before?.durationMs ?? 0) + (run.durationMs ?? 0) });
      }
      const all = [...tests.values()];
      const first = await bench.db.$queryRaw<{ step: Date | null; result: Date | null }[]>`
        SELECT (SELECT min(s.started_at) FROM step_results s JOIN runs r ON r.id = s.run_id WHERE r.suite_run_id = ${id}) AS step,
          (SELECT min(finished_at) FROM runs WHERE suite_run_id = ${id}) AS result`;
      const since = (at: Date | null | undefined) => (at ? at.getTime() - sent : undefined);
      const startup = startupOf(worker.output(), sent);
      return {
        ...(startup ? { startup } : {}),
        wallMs: row.finishedAt.getTime() - sent,
        cpuMs,
        passed: all.filter((t) => t.status === 'passed').length,
        tests: all,
        firstTestMs: since(first[0]?.step),
        firstResultMs: since(first[0]?.result),
      };
    };
    return { round, close, workerOutput: () => worker.output() };
  } catch (error) {
    await close();
    throw error;
  }
}
