import { declareRoute, pathParams } from './route-declaration';
import { parseSecretSetRequest } from './secrets';

/**
 * The secrets of the workspace (`/api/v1/secrets…`) or of one of its projects
 * (`/api/v1/projects/{projectSlug}/secrets…`): list, set (an upsert), delete. `deploy` scope.
 */
export function secretRoutes(of: 'workspace' | 'project') {
  const base = of === 'project' ? '/api/v1/projects/{projectSlug}/secrets' : '/api/v1/secrets';
  const where = of === 'project' ? "the project's" : "the workspace's";
  const owner = of === 'project' ? ['projectSlug'] : [];
  const missing = of === 'project' ? 'The project does not exist in the workspace of the key' : '';
  const Name = of === 'project' ? 'ProjectSecret' : 'WorkspaceSecret';
  return {
    list: declareRoute({
      operationId: `list${Name}s`,
      method: 'get',
      path: base,
      summary: `List ${where} secrets: names and dates, never values`,
      ...(of === 'project'
        ? { description: "The project's own secrets; the workspace's are listed at /api/v1/secrets." }
        : { description: "The workspace-level secrets (those of no project); a project's are listed under it." }),
      auth: 'apiKey',
      scope: 'deploy',
      params: pathParams(...owner),
      idempotent: false,
      conditionalGet: false,
      success: { status: 200, description: 'Every secret there, by name', schema: ['SecretList'] },
      problems: of === 'project' ? { '404': ['not_found'] } : {},
      documented: true,
    }),
    set: declareRoute({
      operationId: `set${Name}`,
      method: 'put',
      path: `${base}/{name}`,
      summary: `Set one of ${where} secrets (create or replace its value)`,
      description:
        'Steps reference it as `{{secrets.NAME}}`. The value is sealed at rest and never shown again: the answer is the name and dates. Repeating the request replaces the value.',
      auth: 'apiKey',
      scope: 'deploy',
      params: pathParams(...owner, 'name'),
      body: { schema: 'SecretSetRequest', parse: parseSecretSetRequest },
      idempotent: false,
      conditionalGet: false,
      success: {
        status: 200,
        description: 'The value was replaced',
        schema: ['Secret'],
        created: 'The secret was created',
      },
      problems: {
        '400': ['invalid_secret_name', 'invalid_body'],
        ...(of === 'project' ? { '404': ['not_found'] } : {}),
        '422': ['limit_exceeded'],
      },
      documented: true,
    }),
    delete: declareRoute({
      operationId: `delete${Name}`,
      method: 'delete',
      path: `${base}/{name}`,
      summary: `Delete one of ${where} secrets`,
      description: `404 when there is no such secret${missing ? ` or ${missing.toLowerCase()}` : ''}.`,
      auth: 'apiKey',
      scope: 'deploy',
      params: pathParams(...owner, 'name'),
      idempotent: false,
      conditionalGet: false,
      success: { status: 204, description: 'Deleted' },
      problems: { '400': ['invalid_secret_name'], '404': ['not_found'] },
      documented: true,
    }),
  };
}
