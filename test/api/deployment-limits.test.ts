// The caps of a deployment (contracts' DEPLOYMENT_LIMITS and TESTS_PER_PROJECT), over HTTP against
// real Postgres: a project file's size, its tests by the workspace's plan, and a project's
// deployments per day. Each refusal is 422 `limit_exceeded` naming the cap and its value, and
// stores nothing; a dry run reports the file's caps; `project apply` is held to the same caps.
import request from 'supertest';
import {
  capValue,
  DEPLOYMENT_LIMITS,
  REQUEST_LIMITS,
  TESTS_PER_PROJECT,
  type Plan,
  type ProjectFile,
} from '@testrun/contracts';
import { AdminError, applyProject } from '../../packages/admin/src/operations';
import { createTenant, sampleProject } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { problemOf } from './typed';

let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

/** A workspace on `plan` with a key that may deploy. */
const tenant = (plan: Plan = 'team') => createTenant(api.db, { plan, scopes: ['deploy'] });

type Cap = Parameters<typeof capValue>[0];
const named = (cap: Cap) => `(limit ${cap} = ${String(capValue(cap))})`;

/** A two-test project each of whose tests fills `fills` inputs with 10,000 characters (about 10 KB a step). */
function padded(slug: string, fills: number): ProjectFile {
  const file = sampleProject(slug, { count: 2 });
  for (const test of file.suites[0]?.tests ?? [])
    test.steps = Array.from({ length: fills }, (_, i) => ({
      action: 'fill',
      selector: `#f${i}`,
      value: 'x'.repeat(10_000),
    }));
  return file;
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

function deploy(key: string, file: ProjectFile, extra: { dryRun?: boolean; activate?: boolean } = {}) {
  return request(api.app)
    .post(`/api/v1/projects/${file.slug}/deployments`)
    .set(bearer(key))
    .send({ project: file, ...extra });
}

/** What a workspace has stored: projects, deployments and tests. */
async function stored(workspaceId: string) {
  const where = { where: { workspaceId } };
  return {
    projects: await api.db.project.count(where),
    deployments: await api.db.deployment.count(where),
    tests: await api.db.test.count(where),
  };
}

describe('DEPLOYMENT_LIMITS.maxProjectFileBytes', () => {
  const over = padded('big', 55);

  it('a file over the cap (in a body the deployments route accepts) is 422 naming the cap; nothing stored, a dry run says so too', async () => {
    expect(jsonBytes(over)).toBeGreaterThan(DEPLOYMENT_LIMITS.maxProjectFileBytes);
    expect(jsonBytes({ project: over })).toBeLessThan(DEPLOYMENT_LIMITS.maxBodyBytes);
    const t = await tenant();
    for (const dryRun of [false, true]) {
      const res = await deploy(t.key, over, { dryRun });
      expect(res.status).toBe(422);
      const problem = problemOf(res, 'limit_exceeded');
      expect(problem.detail).toContain(named('DEPLOYMENT_LIMITS.maxProjectFileBytes'));
      expect(problem.errors).toEqual([
        {
          path: '/project',
          message: expect.stringContaining(named('DEPLOYMENT_LIMITS.maxProjectFileBytes')) as string,
        },
      ]);
    }
    expect(await stored(t.workspace.id)).toEqual({ projects: 0, deployments: 0, tests: 0 });
  });

  it('project apply refuses it the same way and stores nothing', async () => {
    const t = await tenant();
    const error = await applyProject(api.db, t.workspace.id, over).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AdminError);
    expect((error as AdminError).message).toBe('the project file is over a limit');
    expect((error as AdminError).errors.map((e) => e.message)).toEqual([
      expect.stringContaining(named('DEPLOYMENT_LIMITS.maxProjectFileBytes')),
    ]);
    expect(await stored(t.workspace.id)).toEqual({ projects: 0, deployments: 0, tests: 0 });
  });

  it('a file over the API-wide body cap but under its own deploys: the deployments route takes a larger body', async () => {
    const file = padded('mid', 15);
    expect(jsonBytes({ project: file })).toBeGreaterThan(REQUEST_LIMITS.maxBodyBytes);
    const t = await tenant();
    const res = await deploy(t.key, file);
    expect(res.status).toBe(201);
    expect(await stored(t.workspace.id)).toMatchObject({ projects: 1, deployments: 1, tests: 2 });
  });

  it('a body over the deployments route cap is 413 naming DEPLOYMENT_LIMITS.maxBodyBytes', async () => {
    const t = await tenant();
    const res = await deploy(t.key, padded('huge', 110));
    expect(res.status).toBe(413);
    expect(problemOf(res, 'payload_too_large').detail).toContain(named('DEPLOYMENT_LIMITS.maxBodyBytes'));
    expect(await stored(t.workspace.id)).toEqual({ projects: 0, deployments: 0, tests: 0 });
  });
});

describe('TESTS_PER_PROJECT by plan', () => {
  const overFree = sampleProject('many', { count: TESTS_PER_PROJECT.free + 1 });

  it('a free workspace is refused a file over its plan cap (a dry run too) where a team one deploys it', async () => {
    const free = await tenant('free');
    for (const dryRun of [false, true]) {
      const res = await deploy(free.key, overFree, { dryRun });
      expect(res.status).toBe(422);
      const problem = problemOf(res, 'limit_exceeded');
      expect(problem.errors).toEqual([
        { path: '/project/suites', message: expect.stringContaining(named('TESTS_PER_PROJECT.free')) as string },
      ]);
      expect(problem.detail).toContain(`has ${TESTS_PER_PROJECT.free + 1} tests`);
    }
    expect(await stored(free.workspace.id)).toEqual({ projects: 0, deployments: 0, tests: 0 });

    const team = await tenant('team');
    expect((await deploy(team.key, overFree)).status).toBe(201);
    expect(await stored(team.workspace.id)).toEqual({ projects: 1, deployments: 1, tests: TESTS_PER_PROJECT.free + 1 });
  });

  it.each<Plan>(['free', 'team', 'enterprise'])('%s: a file at the cap passes the check', async (plan) => {
    const t = await tenant(plan);
    const res = await deploy(t.key, sampleProject('full', { count: TESTS_PER_PROJECT.free }), { dryRun: true });
    expect(res.status).toBe(200);
  });

  it('project apply is refused for a free workspace and stores nothing', async () => {
    const free = await tenant('free');
    const error = await applyProject(api.db, free.workspace.id, overFree).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AdminError);
    expect((error as AdminError).errors.map((e) => e.message)).toEqual([
      expect.stringContaining(named('TESTS_PER_PROJECT.free')),
    ]);
    expect(await stored(free.workspace.id)).toEqual({ projects: 0, deployments: 0, tests: 0 });
  });
});

describe('DEPLOYMENT_LIMITS.maxDeploymentsPerDay', () => {
  /** Stores the project with one deployment, then `more` deployment rows of it `hoursAgo`, in SQL. */
  async function projectWithDeployments(more: number, hoursAgo = 0) {
    const t = await tenant();
    const file = sampleProject('busy');
    expect((await deploy(t.key, file)).status).toBe(201);
    const project = await api.db.project.findFirstOrThrow({ where: { workspaceId: t.workspace.id, slug: 'busy' } });
    await api.db.$executeRaw`
      INSERT INTO deployments (id, workspace_id, project_id, version, document, changes, created_at)
      SELECT 'dep_seed' || ${t.tag} || '_' || v, ${t.workspace.id}, ${project.id}, v + 1, ${JSON.stringify(file)}::jsonb,
        '{"added":[],"removed":[],"changed":[]}'::jsonb, now() - make_interval(hours => ${hoursAgo})
      FROM generate_series(1, ${more}) AS v`;
    return { t, file };
  }

  const cap = DEPLOYMENT_LIMITS.maxDeploymentsPerDay;

  it('the deployment after the cap in 24 hours is 422 naming the cap, stores nothing; a dry run is not counted', async () => {
    const { t, file } = await projectWithDeployments(cap - 1);
    const res = await deploy(t.key, file, { activate: false });
    expect(res.status).toBe(422);
    const problem = problemOf(res, 'limit_exceeded');
    expect(problem.detail).toContain(named('DEPLOYMENT_LIMITS.maxDeploymentsPerDay'));
    expect(problem.detail).toContain(`stored ${cap} deployments in the last 24 hours`);
    expect(await stored(t.workspace.id)).toMatchObject({ deployments: cap });

    expect((await deploy(t.key, file, { dryRun: true })).status).toBe(200);

    const error = await applyProject(api.db, t.workspace.id, { ...file, name: 'Renamed' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AdminError);
    expect((error as AdminError).message).toContain(named('DEPLOYMENT_LIMITS.maxDeploymentsPerDay'));
    expect(await stored(t.workspace.id)).toMatchObject({ deployments: cap });
    const live = await api.db.project.findFirstOrThrow({ where: { workspaceId: t.workspace.id, slug: 'busy' } });
    expect(live.name).toBe(file.name);
  });

  it('deployments older than 24 hours are not counted, and pruned as before', async () => {
    const { t, file } = await projectWithDeployments(cap + 10, 25);
    const res = await deploy(t.key, file);
    expect(res.status).toBe(201);
    // The active first version and the newest 50 (KEPT_VERSIONS) are kept; older ones are pruned.
    expect(await stored(t.workspace.id)).toMatchObject({ deployments: 51 });
  });

  it('two concurrent deployments at the last free place: one is stored, the other refused; the day is kept from pruning', async () => {
    const { t, file } = await projectWithDeployments(cap - 2);
    const answers = await Promise.all([
      deploy(t.key, file, { activate: false }),
      deploy(t.key, file, { activate: false }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([201, 422]);
    expect(await stored(t.workspace.id)).toMatchObject({ deployments: cap });
  });
});
