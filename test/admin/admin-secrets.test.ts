import { applyProject, createWorkspace } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { readSecret } from '@testrun/core/env';
import { deriveKeys, loadStoredSecrets } from '@testrun/core/secrets';
import type { AdminErrorOutput } from '../../packages/admin/src/run-action';
import type { SecretChangedOutput, SecretListOutput } from '../../packages/admin/src/secret-commands';
import { adminJson, runAdmin, type AdminResult } from '../support/admin';
import { sampleProject, testDb } from '../support/harness';

/** Runs `testrun admin secret …` in this process, with `stdin` as its input (test/support/admin.ts). */
const secret = (args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) =>
  runAdmin(['secret', ...args], opts);

/** The `--json` output of each kind of secret command. */
type Outputs = { changed: SecretChangedOutput; list: SecretListOutput; error: AdminErrorOutput };

/** stdout must be exactly one JSON document: the output of a command of this `kind`. */
const parsed = <K extends keyof Outputs>(result: AdminResult, _kind: K): Outputs[K] => adminJson(result) as Outputs[K];

let db: Db;
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.$disconnect();
});

const WS_VALUE = 'workspace-value-5c1d9e';
const PROJECT_VALUE = 'project-value-a8f3b2';

test('secret set (stdin and --value-env), list and delete never show a value; the project wins', async () => {
  const ws = await createWorkspace(db, { name: 'Secrets', plan: 'team' });
  const project = await applyProject(db, ws.id, sampleProject('shop', { count: 1, suites: ['smoke'] }));

  const setWs = await secret(['set', '--workspace', ws.id, '--name', 'PASSWORD', '--json'], { stdin: `${WS_VALUE}\n` });
  expect(setWs.code).toBe(0);
  expect(parsed(setWs, 'changed')).toEqual({
    name: 'PASSWORD',
    workspaceId: ws.id,
    projectSlug: null,
    state: 'created',
  });
  const setProject = await secret(
    ['set', '--workspace', ws.id, '--project', 'shop', '--name', 'PASSWORD', '--value-env', 'PW_FOR_TEST'],
    { env: { PW_FOR_TEST: PROJECT_VALUE } },
  );
  expect(setProject.code).toBe(0);
  expect(setProject.stdout).toContain('Secret PASSWORD created for project shop');
  // Setting again replaces the value: still one row per scope and name.
  const again = await secret(['set', '--workspace', ws.id, '--name', 'PASSWORD', '--json'], { stdin: WS_VALUE });
  expect(parsed(again, 'changed').state).toBe('updated');
  expect(await db.secretVariable.count({ where: { workspaceId: ws.id } })).toBe(2);

  const list = await secret(['list', '--workspace', ws.id, '--json']);
  expect(parsed(list, 'list').secrets.map((s) => [s.name, s.projectSlug])).toEqual([
    ['PASSWORD', 'shop'],
    ['PASSWORD', null],
  ]);
  for (const r of [setWs, setProject, again, list]) {
    expect(r.stdout + r.stderr).not.toContain(WS_VALUE);
    expect(r.stdout + r.stderr).not.toContain(PROJECT_VALUE);
  }
  const rows = await db.secretVariable.findMany({ where: { workspaceId: ws.id } });
  expect(JSON.stringify(rows.map((r) => Buffer.from(r.valueSealed).toString('latin1')))).not.toContain('value-');

  const key = deriveKeys(readSecret(process.env)).headers;
  expect(await loadStoredSecrets(db, key, ws.id, project.projectId)).toEqual({ PASSWORD: PROJECT_VALUE });
  expect(await loadStoredSecrets(db, key, ws.id, 'prj_other')).toEqual({ PASSWORD: WS_VALUE });

  const deleted = await secret(['delete', '--workspace', ws.id, '--project', 'shop', '--name', 'PASSWORD', '--json']);
  expect(parsed(deleted, 'changed').state).toBe('deleted');
  expect(await loadStoredSecrets(db, key, ws.id, project.projectId)).toEqual({ PASSWORD: WS_VALUE });
});

test('a bad name, a missing project or no value is refused', async () => {
  const ws = await createWorkspace(db, { name: 'Secrets bad', plan: 'team' });
  const badName = await secret(['set', '--workspace', ws.id, '--name', '1-bad', '--json'], { stdin: 'x' });
  expect(badName.code).not.toBe(0);
  expect(parsed(badName, 'error').error.message).toMatch(/not a variable name/);
  const noProject = await secret(['set', '--workspace', ws.id, '--project', 'nope', '--name', 'A'], { stdin: 'x' });
  expect(noProject.stderr).toContain('project nope does not exist');
  const empty = await secret(['set', '--workspace', ws.id, '--name', 'A'], { stdin: '' });
  expect(empty.stderr).toContain('the value is empty');
  const unset = await secret(['set', '--workspace', ws.id, '--name', 'A', '--value-env', 'NOT_SET_ANYWHERE']);
  expect(unset.stderr).toContain('NOT_SET_ANYWHERE is not set');
  expect(await db.secretVariable.count({ where: { workspaceId: ws.id } })).toBe(0);
});
