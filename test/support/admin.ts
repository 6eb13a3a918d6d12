import { execFile } from 'node:child_process';
import path from 'node:path';
import { Readable } from 'node:stream';
import { adminProgram } from '../../packages/admin/src';
import type { AdminContext } from '../../packages/admin/src/run-action';
import { REPO_ROOT } from './processes';

/** What one `testrun admin …` printed, and its exit code. */
export type AdminResult = { code: number; stdout: string; stderr: string };

type AdminInput = {
  /** What the command reads on stdin (`secret set`); empty by default. */
  stdin?: string;
  /** Variables on top of the test file's environment (its own DATABASE_URL, REDIS_*, TESTRUN_SECRET). */
  env?: Record<string, string>;
};

/** Every command of a program, its subcommands too. */
const commandsOf = (c: ReturnType<typeof adminProgram>): Array<ReturnType<typeof adminProgram>> => [
  c,
  ...c.commands.flatMap(commandsOf),
];

/** Commander's error when a usage error or --help ends the program (exitOverride throws it). */
function commanderExit(e: unknown): number | undefined {
  if (!(e instanceof Error) || !('code' in e) || !('exitCode' in e)) return undefined;
  return typeof e.code === 'string' && e.code.startsWith('commander.') && typeof e.exitCode === 'number'
    ? e.exitCode
    : undefined;
}

/**
 * Runs `testrun admin <args>` in this process, as the binary does (the same program, bin.ts's
 * `adminProgram`), with its output, environment and exit code kept here. A commander usage error
 * gives the exit code commander would exit with. Much faster than a process per command, which
 * loads the program and Prisma again each time.
 */
export async function runAdmin(args: string[], input: AdminInput = {}): Promise<AdminResult> {
  let stdout = '';
  let stderr = '';
  let code = 0;
  const ctx: AdminContext = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: () => Readable.from([Buffer.from(input.stdin ?? '')]),
    env: { ...process.env, ...input.env },
    setExitCode: (c) => {
      code = c;
    },
  };
  const program = adminProgram(ctx);
  for (const command of commandsOf(program)) command.exitOverride();
  try {
    await program.parseAsync(['admin', ...args], { from: 'user' });
  } catch (e) {
    const exit = commanderExit(e);
    if (exit === undefined) throw e;
    code = exit;
  }
  return { code, stdout, stderr };
}

/** Runs the operator's built binary (`packages/admin/bin/testrun.js admin …`) as a process of its own. */
export function spawnAdmin(args: string[], input: AdminInput = {}): Promise<AdminResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [path.join(REPO_ROOT, 'packages/admin/bin/testrun.js'), 'admin', ...args],
      { cwd: REPO_ROOT, env: { ...process.env, ...input.env }, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input.stdin ?? '');
  });
}

/** stdout must be exactly one JSON document: the `--json` output of the command. */
export function adminJson(result: AdminResult): unknown {
  expect(result.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(result.stdout);
}
