// `testrun admin key create --scopes`, `key list` and `key set-scopes`, in this process on the test
// database: the default scope, the implied ones, a refused name, and a change the API applies on
// the next request (the replicas are told, as for a revocation).
import request from 'supertest';
import type { Db } from '@testrun/core/db';
import type { KeyCreatedOutput, KeyListOutput, KeyScopesOutput } from '../../packages/admin/src';
import { addMember, createWorkspace } from '../../packages/admin/src/operations';
import { bearer, buildTestApi, type TestApi } from '../api/api-harness';
import { adminJson, runAdmin } from '../support/admin';
import { testDb, uniqueTag } from '../support/harness';
import { expectProblem } from '../support/problems';

let db: Db;
let api: TestApi;
beforeAll(() => {
  db = testDb();
  api = buildTestApi({ db });
});
afterAll(async () => {
  await api.close();
  await db.$disconnect();
});

async function workspace() {
  const ws = await createWorkspace(db, { name: `keys-${uniqueTag()}`, plan: 'team' });
  const email = `owner-${uniqueTag()}@example.test`;
  await addMember(db, ws.id, email);
  const create = async (name: string, ...more: string[]) =>
    runAdmin(['key', 'create', '--workspace', ws.id, '--creator', email, '--name', name, ...more]);
  return { ws, create };
}

it('create gives run by default, each asked scope with those it implies; list shows them, never the key', async () => {
  const { ws, create } = await workspace();
  const plain = adminJson(await create('ci', '--json')) as KeyCreatedOutput;
  expect(plain.scopes).toEqual(['run']);
  const deploy = adminJson(await create('deployer', '--scopes', 'deploy', '--json')) as KeyCreatedOutput;
  expect(deploy.scopes).toEqual(['run', 'preview', 'deploy']);
  const listed = await create('all', '--scopes', 'run, preview,deploy');
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain('(scopes run, preview, deploy)');
  const preview = adminJson(await create('preview', '--scopes', 'preview', '--json')) as KeyCreatedOutput;
  expect(preview.scopes).toEqual(['run', 'preview']);

  const list = adminJson(await runAdmin(['key', 'list', '--workspace', ws.id, '--json'])) as KeyListOutput;
  expect(list.keys.map((k) => [k.name, k.scopes, k.state])).toEqual([
    ['ci', ['run'], 'active'],
    ['deployer', ['run', 'preview', 'deploy'], 'active'],
    ['all', ['run', 'preview', 'deploy'], 'active'],
    ['preview', ['run', 'preview'], 'active'],
  ]);
  const text = await runAdmin(['key', 'list', '--workspace', ws.id]);
  expect(text.stdout.split('\n')[0]).toContain('scopes run\t');
  expect(text.stdout).toContain('scopes run,preview,deploy');
  for (const k of [plain, deploy, preview]) expect(text.stdout + JSON.stringify(list)).not.toContain(k.key);
});

it('an unknown scope name is refused with the known ones, and no key is made', async () => {
  const { ws, create } = await workspace();
  for (const scopes of ['admin', 'run,Deploy', '', ',']) {
    const res = await create('bad', '--scopes', scopes);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/option '--scopes <scopes>' argument '.*' is invalid/);
    expect(res.stderr).toContain('the scopes are run, preview, deploy');
  }
  expect(await db.apiKey.count({ where: { workspaceId: ws.id } })).toBe(0);
  const set = await runAdmin(['key', 'set-scopes', 'key_missing', '--scopes', 'root']);
  expect(set.stderr).toContain('unknown scope "root"');
});

it('set-scopes narrows or widens a key, and the API applies it on the next request', async () => {
  const { create } = await workspace();
  const k = adminJson(await create('ci', '--scopes', 'deploy', '--json')) as KeyCreatedOutput;
  const list = () => request(api.app).get('/api/v1/secrets').set(bearer(k.key));
  expect((await list()).status).toBe(200);
  // The same Redis prefix as the API: the command tells it, as `key revoke` does.
  const env = { REDIS_PREFIX: api.config.redisPrefix };
  const narrowed = await runAdmin(['key', 'set-scopes', k.id, '--scopes', 'run', '--json'], { env });
  expect(adminJson(narrowed) as KeyScopesOutput).toEqual({ id: k.id, workspaceId: k.workspaceId, scopes: ['run'] });
  const refused = expectProblem(await list(), 'insufficient_scope');
  expect(refused.required_scope).toBe('deploy');
  expect((await runAdmin(['key', 'set-scopes', k.id, '--scopes', 'deploy'], { env })).stdout).toBe(
    `Key ${k.id} has the scopes run, preview, deploy.\n`,
  );
  expect((await list()).status).toBe(200);
  expect((await runAdmin(['key', 'set-scopes', 'key_missing', '--scopes', 'run'], { env })).stderr).toContain(
    'key key_missing does not exist',
  );
});
