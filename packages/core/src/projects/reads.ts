// A project's deployments as the API answers them (GET, listing, the answer of a deployment).
import type { Deployment, DeploymentChanges, DeploymentListing, DeploymentList } from '@testrun/contracts';
import { writeCursor } from '@testrun/contracts';
import type { DbTx } from '../db';
import { DeploymentError } from './errors';

type DeploymentRow = {
  id: string;
  project_slug: string;
  version: number;
  active: boolean;
  created_at: Date;
  activated_at: Date | null;
  created_by_key_id: string | null;
  created_by_key_name: string | null;
  changes: DeploymentChanges;
  bundle: string | null;
  warnings: string[];
};

const DEPLOYMENT_COLUMNS = `d.id, p.slug AS project_slug, d.version, COALESCE(p.active_deployment_id = d.id, false) AS active,
      d.created_at, d.activated_at, d.created_by_key_id, d.created_by_key_name, d.changes,
      d.bundle, COALESCE(d.warnings, '[]'::jsonb) AS warnings`;

/** A Playwright test's file, line and project, from its stored definition (SQL NULL for a step test). */
const LOCATION = `CASE WHEN jsonb_typeof(t.steps) = 'object' THEN json_build_object(
    'file', t.steps->'playwright'->>'file', 'line', (t.steps->'playwright'->>'line')::int,
    'project', t.steps->'playwright'->>'project', 'titlePath', t.steps->'playwright'->'titlePath') END`;

function toSummary(row: DeploymentRow): Omit<Deployment, 'tests'> {
  return {
    id: row.id,
    project_slug: row.project_slug,
    version: row.version,
    active: row.active,
    created_at: row.created_at.toISOString(),
    activated_at: row.activated_at?.toISOString() ?? null,
    created_by:
      row.created_by_key_id === null
        ? null
        : { key_id: row.created_by_key_id, key_name: row.created_by_key_name ?? '' },
    changes: row.changes,
    bundle: row.bundle,
    warnings: row.warnings,
  };
}

/**
 * One deployment of the workspace's project `projectSlug` with its tests in the file's order; null
 * for an unknown id, one of another project or of another workspace (all alike).
 */
export async function readDeployment(
  db: DbTx,
  workspaceId: string,
  projectSlug: string,
  deploymentId: string,
): Promise<Deployment | null> {
  const rows = await db.$queryRawUnsafe<Array<DeploymentRow & { tests: Deployment['tests'] }>>(
    `SELECT ${DEPLOYMENT_COLUMNS},
      COALESCE((SELECT json_agg(json_strip_nulls(json_build_object('testId', t.test_id, 'key', t.key, 'name', t.name,
          'suiteSlug', t.suite_slug, 'enabled', t.enabled, 'location', ${LOCATION})) ORDER BY t.position)
        FROM deployment_tests t WHERE t.deployment_id = d.id), '[]'::json) AS tests
    FROM deployments d JOIN projects p ON p.id = d.project_id
    WHERE d.id = $1 AND d.workspace_id = $2 AND p.slug = $3`,
    deploymentId,
    workspaceId,
    projectSlug,
  );
  const row = rows[0];
  return row ? { ...toSummary(row), tests: row.tests } : null;
}

/** A page of a project's deployments, newest first (404 for a project the workspace does not have). */
export async function listDeployments(
  db: DbTx,
  workspaceId: string,
  projectSlug: string,
  page: DeploymentListing,
): Promise<DeploymentList> {
  const [project] = await db.$queryRawUnsafe<Array<{ id: string }>>(
    'SELECT id FROM projects WHERE workspace_id = $1 AND slug = $2',
    workspaceId,
    projectSlug,
  );
  if (!project) throw new DeploymentError('not_found', `No project "${projectSlug}" in this workspace.`);
  const rows = await db.$queryRawUnsafe<DeploymentRow[]>(
    `SELECT ${DEPLOYMENT_COLUMNS}
    FROM deployments d JOIN projects p ON p.id = d.project_id
    WHERE d.project_id = $1 AND ($2::timestamptz IS NULL OR (d.created_at, d.id) < ($2::timestamptz, $3::text))
    ORDER BY d.created_at DESC, d.id DESC
    LIMIT $4`,
    project.id,
    page.after?.createdAt ?? null,
    page.after?.id ?? '',
    page.limit + 1,
  );
  const more = rows.length > page.limit;
  const shown = rows.slice(0, page.limit);
  const last = shown.at(-1);
  return {
    deployments: shown.map(toSummary),
    next_cursor: more && last ? writeCursor(page, { createdAt: last.created_at, id: last.id }) : null,
  };
}
