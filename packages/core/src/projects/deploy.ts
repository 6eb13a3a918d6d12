import {
  isOverCap,
  validateProjectFile,
  type Deployment,
  type DeploymentDryRun,
  type DeploymentTestKey,
  type ProblemFieldError,
  type ProjectFile,
} from '@testrun/contracts';
import type { Db, DbTx } from '../db';
import { ID_PREFIX, newId } from '../ids';
import { applyDocument, type AppliedProject } from './apply';
import { checkDeploymentsPerDay, planErrors, sizeErrors } from './caps';
import { activeDefinitions, canonical, changesOf, deploymentLocation, plannedTests } from './changes';
import { DeploymentError } from './errors';
import { playwrightSection, type ExpandedFile } from './playwright';
import { readDeployment } from './reads';
import { inheritBaselines, recordImportedBaselines } from '../visual/baselines';
import { checkIfMatch, ensureRows, identityOf, lockProject, rowKey, testIdentity, type LockedProject } from './rows';
import { insertDeploymentTests, testRecord } from './test-rows';

/** Inactive deployments no run references are kept for this many versions back from the newest. */
export const KEPT_VERSIONS = 50;

export type DeployInput = {
  workspaceId: string;
  /** The project file as parsed (JSON or YAML); validated here. */
  document: unknown;
  /** Make the new version the active one (false: a preview). */
  activate: boolean;
  /** The API key that deploys (its id; its name is read); null for an operator's `project apply`. */
  keyId: string | null;
  /** The slug the file must have (the request's path), when there is one. */
  slug?: string;
  /** The request's If-Match: the active version (or id) the caller saw. */
  ifMatch?: string | null;
  /** Seals the secrets of webhook endpoints an activated file adds (`deriveKeys(secret).headers`). */
  webhookKey?: Buffer;
  /** More checks of a valid file (the network policy of its URLs); their errors are listed with the file's. */
  check?: (file: ProjectFile) => Promise<ProblemFieldError[]>;
  /**
   * Fills a valid file's Playwright suites with the tests discovery finds in its bundle (see
   * playwright.ts), or lists why it cannot; a file without `playwright:` is not given to it.
   */
  expand?: (file: ProjectFile) => Promise<ExpandedFile | { errors: ProblemFieldError[] }>;
  /**
   * A file identical to the active version's stores no new version: the active one is answered
   * (its file applied again). How `testrun admin project apply` stays idempotent.
   */
  unlessUnchanged?: boolean;
  /** Runs inside the deploying transaction with its answer (an idempotency record). */
  inTransaction?: (tx: DbTx, deployment: Deployment) => Promise<void>;
};

export type Deployed = {
  deployment: Deployment;
  /** What activating made live (null for a preview): ids, and new webhook endpoints' secrets. */
  applied: AppliedProject | null;
};

/**
 * Stores a project file as the project's next version (creating the project if the workspace has
 * none of its slug) and, when `activate`, makes it the live one in the same transaction. Every
 * test gets its stable id now: a test first seen here gets a row that stays archived until a
 * version that has it is active. An invalid file stores nothing and lists every error.
 */
export async function deployProject(db: Db, input: DeployInput): Promise<Deployed> {
  const { file, bundle, warnings, baselines = [] } = await checkedFile(db, input);
  const { workspaceId } = input;
  return db.$transaction(
    async (tx) => {
      const project = await lockProject(tx, workspaceId, file.slug, file);
      checkIfMatch(project, input.ifMatch);
      if (input.unlessUnchanged && input.activate && project.active) {
        const [active] = await tx.$queryRaw<Array<{ document: unknown }>>`
          SELECT document FROM deployments WHERE id = ${project.active.id}`;
        if (active && canonical(active.document) === canonical(file)) {
          const applied = await applyDocument(tx, { workspaceId, projectId: project.id }, file, input.webhookKey);
          const deployment = await readDeployment(tx, workspaceId, project.slug, project.active.id);
          if (!deployment) throw new Error(`deployment ${project.active.id} vanished`);
          await input.inTransaction?.(tx, deployment);
          return { deployment, applied };
        }
      }
      await checkDeploymentsPerDay(tx, project);
      const current = await activeDefinitions(tx, project);
      const ids = await ensureRows(tx, { workspaceId, projectId: project.id }, file);
      const planned = plannedTests(file);
      const changes = changesOf(current, planned);
      const [{ next }] = await tx.$queryRaw<[{ next: number }]>`
        SELECT COALESCE(max(version), 0) + 1 AS next FROM deployments WHERE project_id = ${project.id}`;
      const key = input.keyId
        ? await tx.apiKey.findFirst({ where: { id: input.keyId, workspaceId }, select: { id: true, name: true } })
        : null;
      const id = newId(ID_PREFIX.deployment);
      await tx.deployment.create({
        data: {
          id,
          workspaceId,
          projectId: project.id,
          version: next,
          document: file,
          createdByKeyId: key?.id ?? null,
          createdByKeyName: key?.name ?? null,
          changes,
          bundle,
          warnings,
        },
      });
      await insertDeploymentTests(
        tx,
        id,
        planned.map((t, position) => {
          const row = ids.get(rowKey(t.suiteSlug, t.def.key));
          if (!row) throw new Error(`no row for test ${t.suiteSlug}/${t.def.key}`);
          return { ...testRecord(t.def, position), testId: row.testId, suiteId: row.suiteId, suiteSlug: t.suiteSlug };
        }),
      );
      // Before it may become active: inheritBaselines then copies in only the paths it did not import.
      const deployed = { id, workspaceId, projectId: project.id, activeId: project.active?.id ?? null };
      await recordImportedBaselines(tx, { ...deployed, keyId: key?.id ?? null }, baselines);
      const applied = input.activate ? await makeActive(tx, workspaceId, project, id, file, input.webhookKey) : null;
      await prune(tx, project.id, next);
      const deployment = await readDeployment(tx, workspaceId, project.slug, id);
      if (!deployment) throw new Error(`deployment ${id} was not stored`);
      await input.inTransaction?.(tx, deployment);
      return { deployment, applied };
    },
    { timeout: 60_000 },
  );
}

/** What deploying the file would change, with the ids its tests would have; stores nothing. */
export async function dryRunDeployment(
  db: Db,
  input: Pick<DeployInput, 'workspaceId' | 'document' | 'slug' | 'check' | 'expand'>,
): Promise<DeploymentDryRun> {
  const { file } = await checkedFile(db, input);
  const [row] = await db.$queryRaw<Array<{ id: string; slug: string; active_deployment_id: string | null }>>`
    SELECT id, slug, active_deployment_id FROM projects WHERE workspace_id = ${input.workspaceId} AND slug = ${file.slug}`;
  const project: LockedProject | null = row
    ? {
        id: row.id,
        slug: row.slug,
        active: row.active_deployment_id ? { id: row.active_deployment_id, version: 0 } : null,
      }
    : null;
  const current = project ? await activeDefinitions(db, project) : [];
  const rows = project
    ? await db.$queryRaw<Array<{ id: string; key: string; slug: string; playwright: boolean }>>`
        SELECT t.id, t.key, s.slug, jsonb_typeof(t.steps) = 'object' AS playwright
        FROM tests t JOIN suites s ON s.id = t.suite_id WHERE t.project_id = ${project.id}`
    : [];
  const known = new Map(rows.map((k) => [testIdentity(k.slug, k.key, k.playwright), k.id]));
  const planned = plannedTests(file);
  return {
    dry_run: true,
    project_slug: file.slug,
    changes: changesOf(current, planned),
    tests: planned.map((t) => ({
      testId: known.get(identityOf(t.suiteSlug, t.def)) ?? null,
      key: t.def.key,
      name: t.def.name,
      suiteSlug: t.suiteSlug,
      enabled: t.def.enabled ?? true,
      ...locationOf(t.def.steps),
    })),
  };
}

/**
 * Makes a stored deployment the active one (a rollback or a promotion), atomically: its file
 * becomes the project's live suites and tests in the transaction that flips the active deployment.
 */
export async function activateDeployment(
  db: Db,
  input: {
    workspaceId: string;
    projectSlug: string;
    deploymentId: string;
    ifMatch?: string | null;
    webhookKey?: Buffer;
  },
): Promise<Deployed> {
  const { workspaceId, projectSlug, deploymentId } = input;
  return db.$transaction(
    async (tx) => {
      const project = await lockProject(tx, workspaceId, projectSlug, null);
      const [stored] = project
        ? await tx.$queryRaw<Array<{ document: ProjectFile }>>`
            SELECT document FROM deployments WHERE id = ${deploymentId} AND project_id = ${project.id}`
        : [];
      if (!project || !stored)
        throw new DeploymentError(
          'not_found',
          `No deployment "${deploymentId}" of project "${projectSlug}" in this workspace.`,
        );
      checkIfMatch(project, input.ifMatch);
      const applied =
        project.active?.id === deploymentId
          ? null
          : await makeActive(tx, workspaceId, project, deploymentId, stored.document, input.webhookKey);
      const deployment = await readDeployment(tx, workspaceId, project.slug, deploymentId);
      if (!deployment) throw new Error(`deployment ${deploymentId} vanished`);
      return { deployment, applied };
    },
    { timeout: 60_000 },
  );
}

async function makeActive(
  tx: DbTx,
  workspaceId: string,
  project: LockedProject,
  deploymentId: string,
  file: ProjectFile,
  webhookKey: Buffer | undefined,
): Promise<AppliedProject> {
  const applied = await applyDocument(tx, { workspaceId, projectId: project.id }, file, webhookKey);
  await inheritBaselines(tx, project.active?.id ?? null, deploymentId);
  await tx.$executeRaw`UPDATE projects SET active_deployment_id = ${deploymentId} WHERE id = ${project.id}`;
  await tx.$executeRaw`UPDATE deployments SET activated_at = now() WHERE id = ${deploymentId}`;
  return applied;
}

/**
 * The file validated (and checked against the path's slug, its size, the tests its workspace's plan
 * allows and `check`), or every error of it.
 */
async function checkedFile(
  db: Db,
  input: Pick<DeployInput, 'workspaceId' | 'document' | 'slug' | 'check' | 'expand'>,
): Promise<ExpandedFile> {
  const checked = validateProjectFile(input.document);
  const errors = checked.ok ? [] : [...checked.errors];
  errors.push(...sizeErrors(input.document));
  const raw = input.document as { slug?: unknown } | null;
  if (input.slug !== undefined && typeof raw === 'object' && raw !== null && raw.slug !== input.slug)
    errors.push({ path: '/slug', message: `must be "${input.slug}", the project of the request's path` });
  if (checked.ok && errors.length === 0 && input.check) errors.push(...(await input.check(checked.value)));
  let expanded: ExpandedFile | null = null;
  if (checked.ok && errors.length === 0) {
    const made =
      input.expand && playwrightSection(checked.value)
        ? await input.expand(checked.value)
        : { file: checked.value, bundle: null, warnings: [] };
    if ('errors' in made) errors.push(...made.errors);
    else expanded = made;
  }
  if (expanded && errors.length === 0) errors.push(...(await planErrors(db, input.workspaceId, expanded.file)));
  if (!expanded || errors.length > 0) {
    const overLimit = errors.every((e) => isOverCap(e.message));
    throw new DeploymentError(
      'invalid',
      `the project file is ${overLimit ? 'over a limit' : 'invalid'}`,
      errors,
      overLimit,
    );
  }
  return expanded;
}

/**
 * Deletes the project's inactive deployments older than the last {@link KEPT_VERSIONS} versions
 * and than a day (the day's are counted against `DEPLOYMENT_LIMITS.maxDeploymentsPerDay`) that
 * no run or suite run references (a run's deployment stays readable while the run exists).
 */
async function prune(tx: DbTx, projectId: string, newest: number): Promise<void> {
  await tx.$executeRaw`
    DELETE FROM deployments d
    WHERE d.project_id = ${projectId} AND d.version <= ${newest - KEPT_VERSIONS}
      AND d.created_at <= now() - interval '24 hours'
      AND NOT EXISTS (SELECT 1 FROM projects p WHERE p.active_deployment_id = d.id)
      AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.deployment_id = d.id)
      AND NOT EXISTS (SELECT 1 FROM suite_runs s WHERE s.deployment_id = d.id)`;
}

/** `{location}` of a Playwright test's definition; nothing for a step test. */
function locationOf(steps: unknown): { location?: NonNullable<DeploymentTestKey['location']> } {
  const location = deploymentLocation(steps);
  return location ? { location } : {};
}
