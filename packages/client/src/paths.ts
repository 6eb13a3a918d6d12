import type { RunListFilters, VisualTarget } from './options';

// The URLs of the API's resources, as the client's methods address them.

/** The URL of the secrets of `where`, or of the one named `name` there. */
export function secretPath(where: { projectSlug?: string }, name?: string): string {
  const base =
    where.projectSlug === undefined
      ? '/api/v1/secrets'
      : `/api/v1/projects/${encodeURIComponent(where.projectSlug)}/secrets`;
  return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
}

/** The URL of a project's deployments, or of the one `deploymentId`. */
export function deploymentPath(projectSlug: string, deploymentId?: string): string {
  const base = `/api/v1/projects/${encodeURIComponent(projectSlug)}/deployments`;
  return deploymentId === undefined ? base : `${base}/${encodeURIComponent(deploymentId)}`;
}

/**
 * The URL that approves the visual changes of a run, or of every run of a suite run; or, with
 * `approval-link`, that issues a link approving them in the view.
 */
export function visualApprovalPath(target: VisualTarget, action: 'approve' | 'approval-link' = 'approve'): string {
  const base =
    'runId' in target
      ? `/api/v1/runs/${encodeURIComponent(target.runId)}`
      : `/api/v1/suite-runs/${encodeURIComponent(target.suiteRunId)}`;
  return `${base}/visual-changes/${action}`;
}

/** A listing's query string: the filters given, statuses comma-separated; the API checks them. */
export function listingQuery(filters: RunListFilters): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) {
    if (value === undefined) continue;
    params.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const query = params.toString();
  return query ? `?${query}` : '';
}
