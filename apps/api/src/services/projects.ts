import type { ProjectList } from '@testrun/contracts';
import { readSql, type Db } from '@testrun/core/db';

/**
 * The workspace's projects by slug, each with its suites and tests in the project file's order
 * (archived ones left out), in one statement: what a CI user needs to find a testId or a slug. A
 * Playwright test that several suites select is listed in each, with its one id.
 */
export async function listProjects(db: Db, workspaceId: string): Promise<ProjectList> {
  const rows = await readSql<{ projects: ProjectList['projects'] }>(
    db,
    'projects_of_workspace',
    `SELECT COALESCE(json_agg(json_build_object(
        'id', p.id, 'slug', p.slug, 'name', p.name, 'base_url', p.base_url,
        'suites', COALESCE((
          SELECT json_agg(json_build_object(
            'id', su.id, 'slug', su.slug, 'name', su.name,
            'tests', CASE WHEN p.active_deployment_id IS NULL THEN COALESCE((
              SELECT json_agg(json_build_object('id', t.id, 'key', t.key, 'name', t.name, 'enabled', t.enabled)
                ORDER BY t.position)
              FROM tests t WHERE t.suite_id = su.id AND t.archived_at IS NULL), '[]'::json)
            ELSE COALESCE((
              SELECT json_agg(json_build_object('id', d.test_id, 'key', d.key, 'name', d.name, 'enabled', d.enabled)
                ORDER BY d.position)
              FROM deployment_tests d WHERE d.deployment_id = p.active_deployment_id AND d.suite_id = su.id),
              '[]'::json) END
          ) ORDER BY su.position)
          FROM suites su WHERE su.project_id = p.id AND su.archived_at IS NULL), '[]'::json)
      ) ORDER BY p.slug), '[]'::json) AS projects
    FROM projects p WHERE p.workspace_id = $1`,
    [workspaceId],
  );
  return { projects: rows[0]?.projects ?? [] };
}
