import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeScratchDir, sweepStaleScratchDirs } from './scratch-dir';

describe('scratch directories', () => {
  it("removes a dead process's directory and leaves live ones and others alone", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'scratch-root-'));
    const mine = await makeScratchDir(root);
    // Pid 2^22 + 1 is above Linux's pid_max: no process has it.
    const dead = path.join(root, `testrun-worker-${2 ** 22 + 1}-abc`);
    const parent = path.join(root, `testrun-worker-${process.ppid}-def`);
    const other = path.join(root, 'something-else');
    for (const dir of [dead, parent, other]) mkdirSync(dir);

    expect(await sweepStaleScratchDirs(root)).toEqual({ removed: [dead], failed: [] });
    expect([mine, dead, parent, other].map((dir) => existsSync(dir))).toEqual([true, false, true, true]);
    rmSync(root, { recursive: true, force: true });
  });
});
