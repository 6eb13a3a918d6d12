import { execFile } from 'node:child_process';
import path from 'node:path';
import { addMember, createApiKey, createWorkspace, type Db } from '@testrun/core';
import type { WorkspaceListOutput } from './workspace-list-command';
import { stringMatching } from '../../../test/api/typed';
import { createTenant, testDb } from '../../../test/support/harness';

const ROOT = path.resolve(__dirname, '../../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const BIN = path.join(ROOT, 'packages/admin/src/bin.ts');

// Each command is a process of its own that starts the CLI and connects to Postgres.
jest.setTimeout(120_000);

type CliResult = { code: number; stdout: string; stderr: string };

/** Runs `testrun admin workspace list …` as a separate process against the test database. */
function list(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      [BIN, 'admin', 'workspace', 'list', ...args],
      { cwd: ROOT, env: process.env, timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

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
