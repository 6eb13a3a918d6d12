import { addMember, createApiKey, createWorkspace } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import type { WorkspaceListOutput } from '../../packages/admin/src/workspace-list-command';
import { stringMatching } from '../api/typed';
import { runAdmin, type AdminResult } from '../support/admin';
import { createTenant, testDb } from '../support/harness';

/** Runs `testrun admin workspace list …` in this process against the test database (test/support/admin.ts). */
const list = (...args: string[]): Promise<AdminResult> => runAdmin(['workspace', 'list', ...args]);

let db: Db;
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.$disconnect();
});

describe('testrun admin workspace list', () => {
  it('lists every workspace with its plan, limits, members and unrevoked keys; --json is one document', async () => {
    const empty = await db.workspace.count();
    const team = await createWorkspace(db, { name: 'Listed team', plan: 'team', monthlyRuns: 1234 });
    const tenant = await createTenant(db);
    // A second member with a key, revoked: it no longer counts.
    const other = `other-${tenant.tag}@example.test`;
    await addMember(db, tenant.workspace.id, other);
    const revoked = await createApiKey(db, { workspaceId: tenant.workspace.id, creatorEmail: other, name: 'old' });
    await db.apiKey.update({ where: { id: revoked.id }, data: { revokedAt: new Date() } });

    const r = await list('--json');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const { workspaces } = JSON.parse(r.stdout) as WorkspaceListOutput;
    expect(workspaces).toHaveLength(empty + 2);
    expect(workspaces.find((w) => w.id === team.id)).toEqual({
      id: team.id,
      name: 'Listed team',
      plan: 'team',
      maxActiveRuns: 200,
      monthlyRuns: 1234,
      createdAt: stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      members: 0,
      activeKeys: 0,
    });
    expect(workspaces.find((w) => w.id === tenant.workspace.id)).toMatchObject({ members: 2, activeKeys: 1 });
    // Oldest first.
    const ids = workspaces.map((w) => w.id);
    expect(ids.indexOf(team.id)).toBeLessThan(ids.indexOf(tenant.workspace.id));

    const text = await list();
    expect(text.code).toBe(0);
    const line = text.stdout.split('\n').find((l) => l.startsWith(team.id));
    expect(line).toContain('\tListed team\tteam\t200 active / 1234 a month\t0 members\t0 keys\tcreated ');
  });
});
