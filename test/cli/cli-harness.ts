import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { ProjectFile } from '@testrun/contracts';
import type { CommandContext } from '../../packages/cli/src/client/connection';
import { cliProgram } from '../../packages/cli/src/program';
import { spawnService } from '../support/processes';

const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, 'packages/cli/bin/testrun.js');

export { freePort } from '../support/processes';

/** A project-file test of the fixture site's page behind basic auth: it passes only with the header. */
export function protectedPreviewTest(name = 'Protected preview (needs the basic-auth header)') {
  const test: ProjectFile['suites'][number]['tests'][number] = {
    key: 'protected',
    name,
    timeoutMs: 15_000,
    steps: [
      { action: 'goto', url: '/protected' },
      { action: 'expectText', selector: '#secret', text: 'Welcome, demo', timeoutMs: 3_000 },
    ],
  };
  return test;
}

/** A real service process (`pnpm api` / `pnpm worker` without pnpm in between, so its pid is the process's). */
export interface ServiceProcess {
  child: ChildProcess;
  /** Everything it wrote to stdout (JSON log lines). */
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts `apps/<app>/dist/main.js` (as `pnpm api` / `pnpm worker` do) with the jest run's environment plus `env`. */
export function startService(app: 'api' | 'worker', env: Record<string, string>): ServiceProcess {
  const { child, output } = spawnService(app, env);
  return {
    child,
    output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** Resolves once GET `url` answers 200; rejects with the process output if it exits first. */
export async function waitReady(url: string, service: ServiceProcess, attempts = 300): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (service.child.exitCode !== null) throw new Error(`service exited: ${service.output()}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not ready: ${url}\n${service.output()}`);
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const CLEARED_ENV = new Set([
  'CI',
  'GITHUB_ACTIONS',
  'GITLAB_CI',
  'BUILDKITE',
  'CIRCLECI',
  'TESTRUN_API_URL',
  'TESTRUN_API_KEY',
  'TESTRUN_IDEMPOTENCY_KEY',
]);

/** The jest run may itself be inside CI; the CLI must see only what each test gives it. */
function cliEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !CLEARED_ENV.has(name)));
  return { ...baseEnv, ...env };
}

/** Runs the published entry point (`packages/cli/bin/testrun.js`) as CI would. */
export function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return startCli(args, env).result;
}

/** A stream that keeps what is written to it. */
function sink(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

/** How `exit` of the in-process context ends the program: thrown, caught by {@link runCliHere}. */
class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/**
 * Runs `testrun <args>` in this process as the published binary does (the same program, `cliProgram`
 * of packages/cli, as `main` runs it), with its streams, environment and exit code kept here: as
 * {@link runCli} without starting node and loading the bundle each time. An error the program does
 * not handle ends it with exit 2 and one line on stderr, as `runProgram` does.
 */
export async function runCliHere(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  const [stdout, stderr] = [sink(), sink()];
  let code = 0;
  const ctx: CommandContext = {
    env: cliEnv(env),
    streams: { stdout: stdout.stream, stderr: stderr.stream },
    setExitCode: (c) => {
      code = c;
    },
    exit: (c) => {
      throw new Exit(c);
    },
  };
  try {
    await cliProgram(ctx).parseAsync(args, { from: 'user' });
  } catch (e) {
    if (e instanceof Exit) code = e.code;
    else {
      stderr.stream.write(`testrun: ${(e as Error).message}\n`);
      code = 2;
    }
  }
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** Starts the published entry point as {@link runCli} does, giving its process too (to send it signals). */
export function startCli(
  args: string[],
  env: Record<string, string | undefined> = {},
): { child: ChildProcess; output: () => string; result: Promise<CliResult> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: cliEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const result = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, output: () => stdout + stderr, result };
}

/** Access-log lines (`"message":"request"`) the API wrote for one API key. */
export function accessLog(output: string, keyId: string): Array<{ method: string; path: string; status: number }> {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return {};
      }
    })
    .filter((l) => l.message === 'request' && l.keyId === keyId)
    .map((l) => ({ method: String(l.method), path: String(l.path), status: Number(l.status) }));
}
