import { appendFile, chmod, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { INTERRUPT_FILE, interruptLine } from '../inside/protocol';
import type { PlaywrightTestRef } from './types';

/*
 * Stopping one test of a batch whose other tests carry on (its run was cancelled): the worker names
 * the test in a file of a control directory that only it writes, bound read only into the sandbox;
 * the service's fixture (inside/fixtures.ts) polls it while each test runs, and a Playwright worker
 * whose test is named ends itself. Playwright's runner reports that test failed and goes on with the
 * batch's next tests in a new Playwright worker, as after any worker crash.
 */

/** A control directory under `parent` (root's, readable by the sandbox's user), and how to remove it. */
export async function makeControlDir(parent: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(parent, 'pw-control-'));
  await chmod(dir, 0o755);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Asks the sandbox to stop `test` if it is running (and never to run it, if it has not begun). */
export async function interruptTest(controlDir: string, test: PlaywrightTestRef): Promise<void> {
  await appendFile(path.join(controlDir, INTERRUPT_FILE), `${interruptLine(test)}\n`, { mode: 0o644 });
}
