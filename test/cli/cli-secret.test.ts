/**
 * `testrun secret set NAME --value-env VAR [--project P]`: the published program in this process
 * (runCliHere) against the API behind its real HTTP server. The secret it sets is the one the admin
 * CLI lists and a run of the project opens; the value is read from the environment only and never
 * printed.
 */
import { deriveKeys, loadStoredSecrets } from '@testrun/core/secrets';
import { applyProject } from '../../packages/admin/src/operations';
import type { SecretSetOutput } from '../../packages/cli/src/client/secret-commands';
import type { SecretListOutput } from '../../packages/admin/src/secret-commands';
import { serveTestApi } from '../api/api-harness';
import { anyString } from '../api/typed';
import { adminJson, runAdmin } from '../support/admin';
import { createTenant, sampleProject } from '../support/harness';
import { runCliHere } from './cli-harness';

let served: Awaited<ReturnType<typeof serveTestApi>>;
beforeAll(async () => {
  served = await serveTestApi();
});
afterAll(async () => {
  await served.close();
});

const VALUE = 'cli-secret-3f9a0c-value';

async function tenant(scopes: ('run' | 'deploy')[]) {
  const t = await createTenant(served.api.db, { scopes });
  const project = await applyProject(served.api.db, t.workspace.id, sampleProject('shop'));
  const env = { TESTRUN_API_URL: `http://127.0.0.1:${served.port}`, TESTRUN_API_KEY: t.key, SECRET_VALUE: VALUE };
  return { ...t, projectId: project.projectId, env };
}

it('sets a project secret, then replaces it; the admin CLI lists it and a run of the project opens it', async () => {
  const t = await tenant(['deploy']);
  const first = await runCliHere(
    ['secret', 'set', 'API_TOKEN', '--value-env', 'SECRET_VALUE', '--project', 'shop'],
    t.env,
  );
  expect(first).toMatchObject({ code: 0, stderr: '' });
  expect(first.stdout).toBe('Secret API_TOKEN created for project shop.\n');
  const again = await runCliHere(
    ['secret', 'set', 'API_TOKEN', '--value-env', 'SECRET_VALUE', '--project', 'shop', '--json'],
    t.env,
  );
  expect(again.code).toBe(0);
  const output = JSON.parse(again.stdout) as SecretSetOutput;
  expect(output).toEqual({
    secret: { name: 'API_TOKEN', project_slug: 'shop', created_at: anyString(), updated_at: anyString() },
    state: 'updated',
  });

  const listed = adminJson(
    await runAdmin(['secret', 'list', '--workspace', t.workspace.id, '--json']),
  ) as SecretListOutput;
  expect(listed.secrets.map((s) => [s.name, s.projectSlug])).toEqual([['API_TOKEN', 'shop']]);
  const key = deriveKeys(served.api.config.secret).headers;
  expect(await loadStoredSecrets(served.api.db, key, t.workspace.id, t.projectId)).toEqual({ API_TOKEN: VALUE });
  for (const r of [first, again]) expect(r.stdout + r.stderr).not.toContain(VALUE);
});

it('sets a workspace secret without --project', async () => {
  const t = await tenant(['deploy']);
  const res = await runCliHere(['secret', 'set', 'SHARED', '--value-env', 'SECRET_VALUE'], t.env);
  expect(res).toMatchObject({ code: 0, stdout: 'Secret SHARED created for the workspace.\n' });
  const key = deriveKeys(served.api.config.secret).headers;
  expect(await loadStoredSecrets(served.api.db, key, t.workspace.id, t.projectId)).toEqual({ SHARED: VALUE });
});

it('a key without the deploy scope is told which scope it needs; exit 2', async () => {
  const t = await tenant(['run']);
  const res = await runCliHere(['secret', 'set', 'SHARED', '--value-env', 'SECRET_VALUE'], t.env);
  expect(res.code).toBe(2);
  expect(res.stderr).toContain('API error 403 insufficient_scope');
  expect(res.stderr).toContain('"deploy"');
  expect(res.stdout + res.stderr).not.toContain(VALUE);
  expect(await served.api.db.secretVariable.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
});

it('the value comes from the environment only: an unset variable or no --value-env is a usage error (exit 2)', async () => {
  const t = await tenant(['deploy']);
  const unset = await runCliHere(['secret', 'set', 'A', '--value-env', 'NOT_SET_ANYWHERE'], t.env);
  expect(unset.code).toBe(2);
  expect(unset.stderr).toContain('the environment variable NOT_SET_ANYWHERE is not set');
  const missing = await runCliHere(['secret', 'set', 'A'], t.env);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain("required option '--value-env <VAR>' not specified");
  const positional = await runCliHere(['secret', 'set', 'A', VALUE, '--value-env', 'SECRET_VALUE'], t.env);
  expect(positional.code).toBe(2);
  expect(await served.api.db.secretVariable.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
});
