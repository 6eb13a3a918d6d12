import { createWorkspace } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import type { RetentionOutput } from '../../packages/admin/src/retention-commands';
import type { AdminErrorOutput } from '../../packages/admin/src/run-action';
import { adminJson, runAdmin, type AdminResult } from '../support/admin';
import { testDb } from '../support/harness';

/** Runs `testrun admin workspace set-retention …` in this process against the test database (test/support/admin.ts). */
const setRetention = (...args: string[]) => runAdmin(['workspace', 'set-retention', ...args]);

/** The `--json` output of each kind of result. */
type Outputs = { set: RetentionOutput; error: AdminErrorOutput };

/** stdout must be exactly one JSON document: the output of a result of this `kind`. */
const parsed = <K extends keyof Outputs>(result: AdminResult, _kind: K): Outputs[K] => adminJson(result) as Outputs[K];

let db: Db;
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.$disconnect();
});

const stored = (id: string) =>
  db.workspace.findUniqueOrThrow({ where: { id }, select: { artifactRetentionDays: true, runRetentionDays: true } });

describe('testrun admin workspace set-retention', () => {
  it("sets a workspace's own retention, and `default` gives it back to the deployment's", async () => {
    const ws = await createWorkspace(db, { name: 'Retention', plan: 'free' });
    const set = await setRetention(ws.id, '--artifacts', '7', '--runs', '400', '--json');
    expect(set.code).toBe(0);
    expect(parsed(set, 'set')).toEqual({ id: ws.id, artifactRetentionDays: 7, runRetentionDays: 400 });
    expect(await stored(ws.id)).toEqual({ artifactRetentionDays: 7, runRetentionDays: 400 });

    // One setting alone leaves the other as it is.
    const back = await setRetention(ws.id, '--artifacts', 'default');
    expect(back.code).toBe(0);
    expect(back.stdout).toContain("artifacts for the deployment's ARTIFACT_RETENTION_DAYS and runs for 400 days");
    expect(await stored(ws.id)).toEqual({ artifactRetentionDays: null, runRetentionDays: 400 });
  });

  it('refuses bad days, no setting and an unknown workspace, changing nothing', async () => {
    const ws = await createWorkspace(db, { name: 'Retention refusals', plan: 'free' });
    await setRetention(ws.id, '--runs', '30');
    for (const days of ['0', '36501', 'ten']) {
      const bad = await setRetention(ws.id, '--runs', days);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('must be a whole number of days from 1 to 36500, or "default"');
    }
    const none = await setRetention(ws.id, '--json');
    expect(none.code).toBe(1);
    expect(parsed(none, 'error').error.message).toBe('give --artifacts, --runs or both');
    const unknown = await setRetention('ws_00000000000000000000000000', '--runs', '5', '--json');
    expect(unknown.code).toBe(1);
    expect(parsed(unknown, 'error').error.message).toBe('workspace ws_00000000000000000000000000 does not exist');
    expect(await stored(ws.id)).toEqual({ artifactRetentionDays: null, runRetentionDays: 30 });
  });
});
