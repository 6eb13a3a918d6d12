import * as childProcess from 'node:child_process';
import { appendFileSync } from 'node:fs';
import path from 'node:path';

/*
 * Which test file starts which process (`TESTRUN_SPAWN_LOG=<file> pnpm exec jest …`, docs/TESTING.md
 * "Which process does the work"): every process a jest worker starts, the test file's path, the
 * program and its first arguments, a line each (pid, jest worker's pid, file, program, arguments,
 * tab-separated). test/support/spawn-cpu.cjs joins it with the kernel's process accounting.
 * Every way to start a process but the synchronous ones goes through ChildProcess#spawn, patched
 * once per worker process; the file is read from the real child_process module, which every test
 * file shares.
 */

const out = process.env.TESTRUN_SPAWN_LOG;
const root = path.resolve(__dirname, '../..');
type Shared = typeof childProcess & { spawnLogFile?: string; spawnLogged?: boolean };
const shared = childProcess as Shared;

/** ChildProcess#spawn, which Node's types leave out: what every asynchronous start goes through. */
interface SpawnOptions {
  file: string;
  args?: string[];
}
type Spawn = (this: childProcess.ChildProcess, options: SpawnOptions) => unknown;

if (out && !shared.spawnLogged) {
  shared.spawnLogged = true;
  const proto = childProcess.ChildProcess.prototype as unknown as { spawn: Spawn };
  const spawn = proto.spawn;
  proto.spawn = function (options) {
    const started = spawn.call(this, options);
    const args = (options.args ?? []).slice(1, 8).map((a) => a.replace(/\s+/g, ' ').slice(0, 80));
    const line = [this.pid, process.pid, shared.spawnLogFile ?? '?', options.file, args.join(' ')].join('\t');
    appendFileSync(out, `${line}\n`);
    return started;
  };
}

beforeAll(() => {
  shared.spawnLogFile = path.relative(root, expect.getState().testPath ?? '?');
});
