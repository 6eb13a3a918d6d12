import {
  DEPLOYMENT_LIMITS,
  overCap,
  TESTS_PER_PROJECT,
  type ProblemFieldError,
  type ProjectFile,
} from '@testrun/contracts';
import type { Db, DbTx } from '../db';
import { DeploymentError } from './errors';
import type { LockedProject } from './rows';

// A deployment's caps (contracts' DEPLOYMENT_LIMITS and TESTS_PER_PROJECT): the file's size and its
// tests by plan are errors of the file; the deployments per day refuse the deployment.

/** The file over {@link DEPLOYMENT_LIMITS.maxProjectFileBytes} as compact JSON, as an error of the whole file. */
export function sizeErrors(document: unknown): ProblemFieldError[] {
  const bytes = Buffer.byteLength(JSON.stringify(document ?? null), 'utf8');
  if (bytes <= DEPLOYMENT_LIMITS.maxProjectFileBytes) return [];
  return [
    {
      path: '',
      message: overCap(
        'DEPLOYMENT_LIMITS.maxProjectFileBytes',
        `is ${bytes} bytes as JSON, more than a project file may be`,
      ),
    },
  ];
}

/** The file's tests over the number its workspace's plan allows in a project, as an error of `/suites`. */
export async function planErrors(db: Db, workspaceId: string, file: ProjectFile): Promise<ProblemFieldError[]> {
  const workspace = await db.workspace.findUnique({ where: { id: workspaceId }, select: { plan: true } });
  if (!workspace) return [];
  const tests = file.suites.reduce((sum, suite) => sum + suite.tests.length, 0);
  const cap = TESTS_PER_PROJECT[workspace.plan];
  if (tests <= cap) return [];
  return [
    {
      path: '/suites',
      message: overCap(
        `TESTS_PER_PROJECT.${workspace.plan}`,
        `has ${tests} tests, more than a project of the ${workspace.plan} plan may hold`,
      ),
    },
  ];
}

/**
 * Refuses a deployment (`over_limit`) when the project stored {@link DEPLOYMENT_LIMITS.maxDeploymentsPerDay}
 * in the last 24 hours. Called with the project row locked, so concurrent deployments are counted
 * one after the other and two cannot both pass at the cap; deployProject's pruning keeps the last day's rows.
 */
export async function checkDeploymentsPerDay(tx: DbTx, project: LockedProject): Promise<void> {
  const [{ recent }] = await tx.$queryRaw<[{ recent: number }]>`
    SELECT count(*)::int AS recent FROM deployments
    WHERE project_id = ${project.id} AND created_at > now() - interval '24 hours'`;
  if (recent < DEPLOYMENT_LIMITS.maxDeploymentsPerDay) return;
  throw new DeploymentError(
    'over_limit',
    overCap(
      'DEPLOYMENT_LIMITS.maxDeploymentsPerDay',
      `Project "${project.slug}" stored ${recent} deployments in the last 24 hours, as many as a project may`,
    ),
  );
}
