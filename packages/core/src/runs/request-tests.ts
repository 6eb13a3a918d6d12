// Which tests a run request names: the one decision of what POST /api/v1/runs runs, from the
// workspace's live rows or from a deployment's own definitions (a preview, an older version).
import type { ParsedRunRequest } from '@testrun/contracts';
import type { DbTx, Prisma } from '../db';
import { deploymentTests, NotFoundError, runnableDeployment, type RunnableDeployment } from '../projects';
import type { PlannedTest } from './create';

/** What a request runs: its tests, the suite it names (null for a project or a test), and the deployment. */
export type RequestedTests = {
  tests: PlannedTest[];
  suiteId: string | null;
  deployment: Pick<RunnableDeployment, 'deploymentId' | 'fromDeployment'>;
};

/**
 * The tests a run request names in the workspace, in the order their runs take: a test, a suite's
 * tests, or a project's (each once). The request's deploymentId (else the active deployment)
 * decides which definitions: another version's own (deployment_tests), or the live rows. A
 * {@link NotFoundError} names the project, suite, test or deployment that is not in the workspace.
 * Call inside the transaction that creates the runs: the project row is held until it commits.
 */
export async function requestedTests(
  tx: DbTx,
  workspaceId: string,
  request: ParsedRunRequest,
): Promise<RequestedTests> {
  const target = request.target;
  if (target.mode === 'test') {
    // A test of a preview may be archived (not in the active version): its deployment decides.
    // The id of a test merged into another (test_aliases) addresses the test it was merged into.
    const test = await tx.test.findFirst({
      where: { workspaceId, OR: [{ id: target.testId }, { aliases: { some: { id: target.testId } } }] },
      select: { id: true, enabled: true, evidence: true, archivedAt: true, projectId: true },
    });
    const notFound = new NotFoundError(`No test "${target.testId}" in this workspace.`);
    if (!test) throw notFound;
    const { project, deployment } = await runnable(tx, test.projectId, request);
    if (!deployment.fromDeployment) {
      if (test.archivedAt !== null) throw notFound;
      return { tests: [ofProject(test, project)], suiteId: null, deployment };
    }
    const [defined] = await deploymentTests(tx, deployment.deploymentId ?? '', { testId: test.id });
    if (!defined) throw new NotFoundError(`No test "${target.testId}" in deployment "${request.deploymentId}".`);
    return { tests: [ofProject(defined, project)], suiteId: null, deployment };
  }
  const [row] = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM projects WHERE workspace_id = ${workspaceId} AND slug = ${target.projectSlug}`;
  if (!row) throw new NotFoundError(`No project "${target.projectSlug}" in this workspace.`);
  const { project, deployment } = await runnable(tx, row.id, request);
  const noSuite = () =>
    new NotFoundError(
      `No suite "${target.mode === 'suite' ? target.suiteSlug : ''}" in project "${target.projectSlug}" of this workspace.`,
    );
  if (deployment.fromDeployment) {
    const narrow = target.mode === 'suite' ? { suiteSlug: target.suiteSlug } : {};
    const tests = await deploymentTests(tx, deployment.deploymentId ?? '', narrow);
    const suiteId = target.mode === 'suite' ? (tests[0]?.suite_id ?? null) : null;
    if (target.mode === 'suite' && suiteId === null) throw noSuite();
    return { tests: tests.map((t) => ({ ...ofProject(t, project), suiteId: t.suite_id })), suiteId, deployment };
  }
  // Only what decides each run is read; the INSERT copies the tests' names and steps itself.
  let suiteId: string | null = null;
  if (target.mode === 'suite') {
    const [suite] = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT id FROM suites WHERE project_id = ${row.id} AND slug = ${target.suiteSlug} AND archived_at IS NULL`;
    if (!suite) throw noSuite();
    suiteId = suite.id;
  }
  if (deployment.deploymentId !== null) {
    // The active deployment lists each suite's tests: a test several suites select runs once for the project.
    const narrow = target.mode === 'suite' ? { suiteSlug: target.suiteSlug } : {};
    const tests = await deploymentTests(tx, deployment.deploymentId, narrow);
    return { tests: tests.map((t) => ({ ...ofProject(t, project), suiteId: t.suite_id })), suiteId, deployment };
  }
  // A project from before deployments: its live rows, each test in its one suite.
  const tests =
    suiteId !== null
      ? await tx.$queryRaw<TestRow[]>`
          SELECT id, enabled, evidence FROM tests WHERE suite_id = ${suiteId} AND archived_at IS NULL ORDER BY position`
      : await tx.$queryRaw<TestRow[]>`
          SELECT t.id, t.enabled, t.evidence FROM tests t JOIN suites s ON s.id = t.suite_id
          WHERE t.project_id = ${row.id} AND t.archived_at IS NULL AND s.archived_at IS NULL
          ORDER BY s.position, t.position`;
  return { tests: tests.map((t) => ofProject(t, project)), suiteId, deployment };
}

/**
 * The deployment a request runs (the project row held until it commits, so an activation waits for
 * it), and what the runs take from the project: the base URL and evidence settings of that
 * deployment. Not found for a deploymentId of no deployment of this project.
 */
async function runnable(tx: DbTx, projectId: string, request: ParsedRunRequest) {
  const deployment = await runnableDeployment(tx, projectId, request.deploymentId);
  if (!deployment)
    throw new NotFoundError(`No deployment "${request.deploymentId ?? ''}" of this project in this workspace.`);
  const project = { baseUrl: deployment.project.baseUrl, evidence: deployment.project.evidence as Prisma.JsonValue };
  return { deployment, project };
}

type TestRow = { id: string; enabled: boolean; evidence: Prisma.JsonValue };

/** A test row with what it takes from its project: the base URL and the evidence settings. */
function ofProject(
  test: { id: string; enabled: boolean; evidence: unknown },
  project: { baseUrl: string; evidence: Prisma.JsonValue },
): PlannedTest {
  return {
    id: test.id,
    enabled: test.enabled,
    evidence: test.evidence as Prisma.JsonValue,
    baseUrl: project.baseUrl,
    projectEvidence: project.evidence,
  };
}
