import type { ProjectFile } from '@testrun/contracts';
import type { DbTx } from '../db';

/** The deployment a request's runs execute, and where their definitions are read from. */
export type RunnableDeployment = {
  /** Kept on each run; null for a project from before deployments. */
  deploymentId: string | null;
  /** True for a deployment other than the active one: its own definitions (deployment_tests), not the live rows. */
  fromDeployment: boolean;
  /** What runs take from the project: the base URL and evidence settings of the deployment run. */
  project: { baseUrl: string; evidence: unknown };
};

/**
 * Which deployment of the project runs: `requested` (a deploymentId of the request), else the
 * active one; null when `requested` is no deployment of this project. The project row is held FOR
 * KEY SHARE until the transaction ends (what the runs' foreign key takes anyway), so an activation,
 * which locks it FOR UPDATE, waits for the runs being enqueued, and they read one version whole.
 */
export async function runnableDeployment(
  tx: DbTx,
  projectId: string,
  requested: string | null,
): Promise<RunnableDeployment | null> {
  const [project] = await tx.$queryRaw<Array<{ active: string | null; base_url: string; evidence: unknown }>>`
    SELECT active_deployment_id AS active, base_url, evidence FROM projects WHERE id = ${projectId} FOR KEY SHARE`;
  if (!project) return null;
  if (requested === null || requested === project.active) {
    const live = { baseUrl: project.base_url, evidence: project.evidence };
    return { deploymentId: project.active, fromDeployment: false, project: live };
  }
  const [deployment] = await tx.$queryRaw<Array<{ document: ProjectFile }>>`
    SELECT document FROM deployments WHERE id = ${requested} AND project_id = ${projectId}`;
  if (!deployment) return null;
  const { baseUrl, evidence } = deployment.document;
  return { deploymentId: requested, fromDeployment: true, project: { baseUrl, evidence: evidence ?? null } };
}

/** A test of a deployment as runs of it take it: which suite, in which order, enabled or not. */
export type DeploymentTestRow = { id: string; suite_id: string; enabled: boolean; evidence: unknown };

/**
 * The tests of a deployment, in its file's order, each once (a test several suites select is taken
 * with the first of them); `suiteSlug` narrows them to one suite's.
 */
export async function deploymentTests(
  tx: DbTx,
  deploymentId: string,
  narrow: { suiteSlug?: string; testId?: string } = {},
): Promise<DeploymentTestRow[]> {
  return tx.$queryRaw<DeploymentTestRow[]>`
    SELECT id, suite_id, enabled, evidence FROM (
      SELECT DISTINCT ON (test_id) test_id AS id, suite_id, enabled, evidence, position FROM deployment_tests
      WHERE deployment_id = ${deploymentId}
        AND (${narrow.suiteSlug ?? null}::text IS NULL OR suite_slug = ${narrow.suiteSlug ?? null}::text)
        AND (${narrow.testId ?? null}::text IS NULL OR test_id = ${narrow.testId ?? null}::text)
      ORDER BY test_id, position) d
    ORDER BY position`;
}
