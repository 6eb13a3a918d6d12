import type { Step } from '@testrun/contracts';
import { applyProject, setSecretVariable } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { deriveKeys, sealHeaders, sealRunVariables } from '@testrun/core/secrets';
import { createTenant, testDb, testSecret } from '../support/harness';
import { openRunSecrets } from '../../apps/worker/src/run/run-secrets';
import { MASK } from '../../apps/worker/src/run/secret-mask';

let db: Db;
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.$disconnect();
});

const key = deriveKeys(testSecret()).headers;
const steps: Step[] = [
  { action: 'goto', url: '/?u={{vars.USER}}' },
  { action: 'fill', selector: '#pw', value: '{{secrets.PASSWORD}}' },
  { action: 'fill', selector: '#otp', value: '{{secrets.OTP}}' },
];

async function scope() {
  const { workspace } = await createTenant(db);
  const project = await applyProject(db, workspace.id, {
    slug: 'p',
    name: 'P',
    baseUrl: 'http://127.0.0.1:9/',
    suites: [{ slug: 's', name: 'S', tests: [{ key: 't', name: 'T', steps }] }],
  });
  return { workspaceId: workspace.id, projectId: project.projectId };
}

describe('openRunSecrets', () => {
  it('resolves request over project over workspace, and masks only what the run uses', async () => {
    const { workspaceId, projectId } = await scope();
    await setSecretVariable(db, key, { workspaceId }, 'PASSWORD', 'workspace-pass');
    await setSecretVariable(db, key, { workspaceId, projectSlug: 'p' }, 'PASSWORD', 'project-pass');
    await setSecretVariable(db, key, { workspaceId }, 'OTP', 'workspace-otp');
    await setSecretVariable(db, key, { workspaceId }, 'UNUSED', 'never-used-value');
    const run = {
      id: 'run_x',
      workspaceId,
      projectId,
      headersSealed: new Uint8Array(sealHeaders(key, 'run_x', { 'X-Token': 'header-token' })),
      variablesSealed: new Uint8Array(
        sealRunVariables(key, 'run_x', { vars: { USER: 'ada' }, secrets: { OTP: 'request-otp' } }),
      ),
    };
    const opened = await openRunSecrets(db, key, run, steps);
    if (!('secrets' in opened)) throw new Error(`not opened: ${JSON.stringify(opened)}`);
    expect(opened.secrets.values).toEqual({
      vars: { USER: 'ada' },
      secrets: { PASSWORD: 'project-pass', OTP: 'request-otp' },
    });
    expect(opened.secrets.headers).toEqual({ 'X-Token': 'header-token' });
    const { mask } = opened.secrets;
    expect(mask.text('header-token project-pass request-otp never-used-value ada')).toBe(
      `${MASK} ${MASK} ${MASK} never-used-value ada`,
    );
  });

  it('ends the run invalid_definition naming an unknown variable, and internal_error on another key', async () => {
    const { workspaceId, projectId } = await scope();
    const run = { id: 'run_y', workspaceId, projectId, headersSealed: null, variablesSealed: null };
    const unknown = await openRunSecrets(db, key, run, steps);
    expect(unknown).toEqual({
      outcome: expect.objectContaining({
        status: 'error',
        code: 'invalid_definition',
        message: "step 1: {{vars.USER}} is not defined in the request's variables",
      }) as unknown,
    });
    await setSecretVariable(
      db,
      deriveKeys('another-secret-another-secret-0123456789').headers,
      { workspaceId },
      'PASSWORD',
      'x',
    );
    const unreadable = await openRunSecrets(db, key, run, steps);
    expect(unreadable).toEqual({
      outcome: expect.objectContaining({ status: 'error', code: 'internal_error' }) as unknown,
    });
  });
});
