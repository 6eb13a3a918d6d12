/**
 * The service's side of the parity harness: a private stack (the built API and a worker on their
 * own ports, database `testrun_bench_parity`, a Redis prefix of their own, bench/h2h/service.ts),
 * the repository deployed as a team deploys it (`testrun deploy --file testrun.yaml` with the
 * CLI of packages/cli), one suite run as a team's CI runs it (`testrun run --junit`), followed to
 * its end.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { isPlaywrightDefinition } from '@testrun/contracts';
import { startBenchService } from '../h2h/service';
import { CLI, placeholderProject } from '../playwright/service';
import { photographView } from './view-shots';

/** One run of the suite run, as the service stored it. */
export interface ServiceResult {
  /** Absolute path of its spec file (the bundle's path under the project file's folder). */
  file: string;
  project: string;
  titlePath: string[];
  status: string;
  outcomeCode: string | null;
  summary: string;
  /** Its outcome's whole message (the error Playwright gave, say). */
  message: string | null;
  durationMs: number | null;
  /** Its retry (0: the first try passed or failed for good). */
  retry: number;
}

export interface ServiceSide {
  deployOutput: string;
  /** The JUnit file `testrun run --junit` wrote. */
  junitFile: string;
  /** The view's pictures taken (`--view-shots`). */
  shots: string[];
  /** What `testrun run` printed for people (its progress, the tests, the verdict: not its --json result). */
  runOutput: string;
  deployMs: number;
  tests: ServiceResult[];
  /** From the POST to the suite run's end. */
  wallMs: number;
  status: string;
}

/** The CLI in `cwd` with `env` added (the key never on its command line): its exit code and output. */
export function cli(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string; stdout: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let [output, stdout] = ['', ''];
  child.stdout.on('data', (c: Buffer) => {
    output += c.toString('utf8');
    stdout += c.toString('utf8');
  });
  child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output, stdout })));
}

/** The rule of TARGET_ALLOW that opens the site under test's port, and only it. */
export function siteRule(baseUrl: string): string {
  const url = new URL(baseUrl);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `${url.hostname}:${port}`;
}

export type Deployed = { code: number | null; output: string };

/**
 * A repository's suite on a private stack, as both harnesses deploy and run it: the project file,
 * deployed by `deploy` (which puts it in place around the CLI's deploy), suite `suiteSlug` of
 * project `projectSlug` run against `baseUrl` with `variables`, on a worker of `slots` slots with
 * `workerEnv` added to its environment.
 */
export interface StackSuite {
  projectFile: string;
  projectSlug: string;
  suiteSlug: string;
  baseUrl: string;
  variables: Record<string, string>;
  workerEnv: Record<string, string>;
  slots: number;
  deploy: (run: () => Promise<Deployed>) => Promise<Deployed>;
}

/**
 * Starts the stack, runs `deploy` (which writes and removes the project file: the repository is
 * left as it was), runs suite `suiteSlug` of project `projectSlug` against `baseUrl` with `variables`
 * and each run's evidence off, and stops the stack.
 */
export async function runServiceSide(
  options: StackSuite & {
    /** Where `testrun run` writes its JUnit. */
    junitFile: string;
    /** Where to photograph the view of the suite run (view-shots.ts), if anywhere. */
    viewShots?: string;
  },
): Promise<ServiceSide> {
  const bench = await startBenchService('parity', placeholderProject('parity-placeholder'), {
    scopes: ['deploy'],
    targetAllow: siteRule(options.baseUrl),
  });
  const worker = bench.spawnWorker(options.slots, options.workerEnv);
  try {
    const env = { TESTRUN_API_URL: bench.apiUrl, TESTRUN_API_KEY: bench.key };
    const began = performance.now();
    const cwd = path.dirname(options.projectFile);
    const deployed = await options.deploy(() => cli(['deploy', '--file', options.projectFile], cwd, env));
    const deployMs = performance.now() - began;
    if (deployed.code !== 0)
      throw new Error(
        `testrun deploy exited ${deployed.code}:\n${deployed.output}\nthe worker said:\n${worker.output()}`,
      );
    const vars = Object.entries(options.variables).flatMap(([name, value]) => ['--var', `${name}=${value}`]);
    const ran = await cli(
      [
        ...['run', '--project', options.projectSlug, '--suite', options.suiteSlug, '--base-url', options.baseUrl],
        // Evidence off, as the timing is compared; the project's default (on failure) when the view is photographed.
        ...vars,
        ...(options.viewShots ? [] : ['--trace', 'off', '--video', 'off', '--screenshots', 'off']),
        ...['--timeout', '2h', '--junit', options.junitFile, '--json'],
      ],
      cwd,
      env,
    );
    const id = /"suiteRunId":\s*"([^"]+)"/.exec(ran.output)?.[1];
    if (!id) throw new Error(`testrun run exited ${ran.code} without a suite run:\n${ran.output}`);
    const row = await bench.suiteTerminal(id);
    const shots = options.viewShots
      ? await photographView(ran.stdout, bench.apiUrl, options.viewShots, options.projectSlug)
      : [];
    const runs = await bench.db.run.findMany({
      where: { suiteRunId: id },
      orderBy: { position: 'asc' },
      select: {
        ...{ status: true, outcomeCode: true, outcomeMessage: true, resultSummary: true },
        ...{ durationMs: true, steps: true, retry: true },
      },
    });
    const tests = runs.flatMap((run): ServiceResult[] => {
      if (!isPlaywrightDefinition(run.steps)) return [];
      const pw = run.steps.playwright;
      return [
        {
          file: path.resolve(cwd, pw.file),
          project: pw.project,
          titlePath: pw.titlePath,
          status: run.status,
          outcomeCode: run.outcomeCode,
          summary: run.resultSummary,
          message: run.outcomeMessage,
          durationMs: run.durationMs,
          retry: run.retry,
        },
      ];
    });
    return {
      deployOutput: deployed.output,
      junitFile: options.junitFile,
      shots,
      runOutput: ran.output.replace(ran.stdout, ''),
      deployMs,
      tests,
      // From the enqueue (the suite run's creation) to its end.
      wallMs: row.finishedAt.getTime() - row.createdAt.getTime(),
      status: row.status,
    };
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
    await bench.close();
  }
}
