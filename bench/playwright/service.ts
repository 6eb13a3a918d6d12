/**
 * The service's side of the Playwright benchmarks, the seam where the service plugs in: the built
 * API and a worker (bench/h2h/service.ts), a project deployed with the CLI as a team deploys one
 * (`testrun deploy --file testrun.yaml`: pack, upload the bundle, discovery in the sandbox), and a
 * suite run through `POST /api/v1/runs`, followed to its end.
 *
 * Until the service runs Playwright projects, {@link startPlaywrightService} answers `pending`
 * with the reason (the first deploy's error), and the report marks the service's rows pending.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ProjectFile } from '@testrun/contracts';
import { REPO_ROOT } from '../../test/support/processes';
import { CpuGroup, treeCpuMs } from '../h2h/cpu';
import { startBenchService } from '../h2h/service';
import { suiteRunPhases, type Phases } from './phases';
import { sampleSandboxMemory, sandboxesGone } from './sandbox-memory';

/** Wall time and CPU of one trial. */
export interface Trial {
  wallMs: number;
  cpuMs: number;
  /** Where its wall time went: to the first test's start, to the last test's end, to the end (phases.ts). */
  phases?: Phases;
  /** Service only: the peak memory of each sandbox the suite run used (empty where unreadable). */
  sandboxPeaks?: number[];
  /** Service only: from the verdict to the end of the suite run's last sandbox (its runner's shut-down). */
  tailMs?: number;
  /** Service only: the statements the worker's Postgres client sent for the suite run (count-statements.cjs). */
  statements?: number;
  /** Service only: the suite run's id. */
  suiteRunId?: string;
}

/** What the Playwright benchmarks ask of the service. */
export interface PlaywrightService {
  /** `testrun deploy --file FILE` to its end: its wall time. Throws with the CLI's output when it fails. */
  deploy(file: string): Promise<{ wallMs: number }>;
  /**
   * Replaces the worker by one with `k` slots (`env` added to its environment), and warms it with one
   * run of `projectSlug`/`suiteSlug`, or of its first test alone with `oneTest`.
   */
  useWorker(
    k: number,
    warm: { projectSlug: string; suiteSlug: string; oneTest?: boolean },
    env?: Record<string, string>,
  ): Promise<void>;
  /** POSTs a suite run and resolves once it is POSTed, with its id and a promise of its terminal status (whatever its tests did). */
  startSuite(projectSlug: string, suiteSlug: string): Promise<{ id: string; ended: Promise<string> }>;
  /** Approves every visual change of a suite run with the bench's `deploy` key (docs/VISUAL.md): how many it approved. */
  approveVisual(suiteRunId: string): Promise<number>;
  /** The runs of a suite run: each one's test name, status, outcome code and message. */
  runsOf(
    suiteRunId: string,
  ): Promise<{ testName: string; status: string; outcomeCode: string | null; outcomeMessage: string | null }[]>;
  /** The durations (ms) of a suite run's steps whose label starts with `label`. */
  stepDurations(suiteRunId: string, label: string): Promise<number[]>;
  /** Runs a suite; wall from the POST to the suite run's end, CPU of the API, worker, browsers and Postgres backends. */
  runSuite(projectSlug: string, suiteSlug: string, expectPassed: number): Promise<Trial>;
  close(): Promise<void>;
}

/** A step project a bench workspace starts with (named `slug`): the Playwright projects arrive by deploy. */
export function placeholderProject(slug: string): ProjectFile {
  return {
    slug,
    name: 'Placeholder',
    baseUrl: 'http://127.0.0.1:9',
    suites: [
      { slug: 'none', name: 'None', tests: [{ key: 'none', name: 'None', steps: [{ action: 'goto', url: '/' }] }] },
    ],
  };
}

/** The CLI's entry point, as a team runs it. */
export const CLI = path.join(REPO_ROOT, 'packages', 'cli', 'bin', 'testrun.js');

/** The worker's environment that counts its Postgres statements into `file` (count-statements.cjs). */
function countingStatements(file: string): Record<string, string> {
  const preload = path.join(__dirname, 'count-statements.cjs');
  return {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim(),
    TESTRUN_BENCH_STATEMENTS: file,
  };
}

/** The count the worker `pid` has sent so far: asked by SIGUSR2, read from `file` (count-statements.cjs). */
async function statementCount(pid: number, file: string): Promise<number> {
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 200; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    try {
      return Number(readFileSync(file, 'utf8'));
    } catch {
      // Not written yet.
    }
  }
  throw new Error('the worker did not write its statement count within 2 s');
}

/** Runs the CLI with the bench key in its environment (never on its command line); its output and wall time. */
function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string; wallMs: number }> {
  const began = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
  return new Promise((resolve) =>
    child.on('exit', (code) => resolve({ code, output, wallMs: performance.now() - began })),
  );
}

/**
 * The service, with `firstProject` (a testrun.yaml) deployed; or `pending` and why, when the service
 * cannot deploy or run it yet (the API, the CLI's packer, discovery or the worker's executor).
 */
export async function startPlaywrightService(
  firstProject: string,
): Promise<{ service: PlaywrightService } | { pending: string }> {
  const bench = await startBenchService('playwright', placeholderProject('bench-placeholder'), { scopes: ['deploy'] });
  const group = CpuGroup.create(`testrun-pw-service-${process.pid}`);
  group?.add(bench.api.child.pid ?? 0);
  const cliEnv = { TESTRUN_API_URL: bench.apiUrl, TESTRUN_API_KEY: bench.key };
  // Discovery runs in a worker: one must be up before the first deploy.
  const statementsFile = path.join(tmpdir(), `testrun-bench-statements-${process.pid}`);
  const spawnWorker = (k: number, env: Record<string, string> = {}) => {
    rmSync(statementsFile, { force: true });
    return bench.spawnWorker(k, { ...env, ...countingStatements(statementsFile) });
  };
  let worker = spawnWorker(2);
  group?.add(worker.child.pid ?? 0);
  const stopWorker = async () => {
    worker.child.kill('SIGTERM');
    await worker.exited;
  };

  const service: PlaywrightService = {
    deploy: async (file) => {
      const run = await cli(['deploy', '--file', file], cliEnv);
      if (run.code !== 0) throw new Error(`testrun deploy --file ${file} exited ${run.code}:\n${run.output}`);
      return { wallMs: run.wallMs };
    },
    useWorker: async (k, warm, env = {}) => {
      await stopWorker();
      worker = spawnWorker(k, env);
      group?.add(worker.child.pid ?? 0);
      if (!warm.oneTest) {
        await bench.suiteTerminal(await bench.post({ projectSlug: warm.projectSlug, suiteSlug: warm.suiteSlug }));
        await sandboxesGone(worker.child.pid ?? 0);
        return;
      }
      const test = await bench.db.test.findFirstOrThrow({
        where: { workspaceId: bench.workspaceId, project: { slug: warm.projectSlug }, enabled: true },
        orderBy: { position: 'asc' },
        select: { id: true },
      });
      const runId = await bench.post({ testId: test.id });
      while ((await bench.db.run.findUniqueOrThrow({ where: { id: runId } })).finishedAt === null)
        await new Promise((resolve) => setTimeout(resolve, 100));
      await sandboxesGone(worker.child.pid ?? 0);
    },
    startSuite: async (projectSlug, suiteSlug) => {
      const id = await bench.post({ projectSlug, suiteSlug });
      return { id, ended: bench.suiteTerminal(id).then((row) => row.status) };
    },
    approveVisual: async (suiteRunId) => {
      const res = await fetch(`${bench.apiUrl}/api/v1/suite-runs/${suiteRunId}/visual-changes/approve`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bench.key}`, 'content-type': 'application/json' },
        body: '{}',
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`the approval answered ${res.status}: ${text}`);
      return (JSON.parse(text) as { approved: unknown[] }).approved.length;
    },
    runsOf: (suiteRunId) =>
      bench.db.run.findMany({
        where: { suiteRunId },
        orderBy: { position: 'asc' },
        select: { testName: true, status: true, outcomeCode: true, outcomeMessage: true },
      }),
    stepDurations: async (suiteRunId, label) => {
      const steps = await bench.db.stepResult.findMany({
        where: { run: { suiteRunId }, label: { startsWith: label } },
        select: { durationMs: true },
      });
      return steps.map((step) => step.durationMs);
    },
    runSuite: async (projectSlug, suiteSlug, expectPassed) => {
      const pids = [bench.api.child.pid ?? 0, worker.child.pid ?? 0];
      const statementsBefore = await statementCount(worker.child.pid ?? 0, statementsFile);
      const pgBefore = await bench.backendPids();
      const serviceCpu = () => group?.usageMs() ?? treeCpuMs(pids);
      const cpuBefore = serviceCpu() + treeCpuMs([], pgBefore);
      const memory = sampleSandboxMemory(worker.child.pid ?? 0);
      const sent = Date.now();
      // The same evidence as the `playwright test` side: trace, video and screenshots off.
      const evidence = { trace: 'off', video: 'off', screenshots: 'off' };
      const id = await bench.post({ projectSlug, suiteSlug, evidence });
      const row = await bench.suiteTerminal(id);
      // Its wall time ends with the verdict; its CPU and memory with its sandboxes, whose runners and
      // browsers shut down after the last result: the next trial starts on an idle worker.
      const ended = Date.now();
      if (!(await sandboxesGone(worker.child.pid ?? 0)))
        throw new Error('service: a sandbox was still running 60 s after the suite run ended');
      const tailMs = Date.now() - ended;
      const sandboxPeaks = memory.stop();
      const phases = await suiteRunPhases(bench.db, id, sent, row.finishedAt.getTime());
      const pgAfter = await bench.backendPids();
      const cpuMs = serviceCpu() + treeCpuMs([], [...new Set([...pgBefore, ...pgAfter])]) - cpuBefore;
      const statements = (await statementCount(worker.child.pid ?? 0, statementsFile)) - statementsBefore;
      if (row.passedCount !== expectPassed) {
        const why = await bench.db.run.findMany({
          where: { suiteRunId: id, status: { not: 'passed' } },
          select: { resultSummary: true },
          distinct: ['resultSummary'],
          take: 3,
        });
        const reasons = why.map((r) => r.resultSummary).join(' | ');
        throw new Error(`service: ${row.passedCount} of ${expectPassed} passed (${row.status}): ${reasons}`);
      }
      return {
        wallMs: row.finishedAt.getTime() - sent,
        cpuMs,
        phases,
        sandboxPeaks,
        tailMs,
        statements,
        suiteRunId: id,
      };
    },
    close: async () => {
      await stopWorker();
      rmSync(statementsFile, { force: true });
      await bench.close();
      await group?.remove();
    },
  };

  try {
    await service.deploy(firstProject);
  } catch (error) {
    await service.close();
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(
      `the first deploy failed: ${message}\nthe API said:\n${bench.api.output()}\nthe worker said:\n${worker.output()}\n`,
    );
    const reason = message.split('\n').find((line) => line.startsWith('testrun:')) ?? message.split('\n')[1] ?? '';
    return { pending: reason.trim() || 'the deploy failed' };
  }
  return { service };
}
