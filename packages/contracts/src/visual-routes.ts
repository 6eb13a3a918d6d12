import { declareRoute, pathParams } from './route-declaration';
import { parseVisualApproval } from './visual';

/**
 * Visual comparison's writes (docs/VISUAL.md, "Approve where you look"): approving a run's or a
 * suite run's visual changes as baselines, and issuing the short-lived link that approves them in
 * the view. The view's own link (suiteRunUrl, a run's Link header) cannot approve.
 */

/** An approval of the visual changes of a run or of a suite run's runs. */
function approveVisual<K extends string>(operationId: string, path: string, param: K, what: string) {
  return declareRoute({
    operationId,
    method: 'post',
    path,
    summary: `Approve the visual changes of ${what} as baselines`,
    description:
      "Each change not yet approved (or each named in `ids`) becomes the baseline of its snapshot in the deployment its run ran: a preview's approval changes that preview's baselines only, and needs a key with the `preview` scope; one in a run of the project's active deployment changes the project's baselines and needs `deploy` (403 `insufficient_scope` naming it). Activating a preview makes its baselines the project's. Approving again approves nothing more. The view's link cannot approve.",
    auth: 'apiKey',
    scope: 'preview',
    params: pathParams(param),
    body: { schema: 'VisualApprovalRequest', parse: parseVisualApproval },
    idempotent: false,
    conditionalGet: false,
    success: { status: 200, description: 'What was approved', schema: ['VisualApproval'] },
    problems: { '400': ['invalid_body'], '404': ['not_found'] },
    documented: true,
  });
}

/** The link that approves a run's or a suite run's visual changes in the view, for the key that asks. */
function approvalLink<K extends string>(operationId: string, path: string, param: K, what: string) {
  return declareRoute({
    operationId,
    method: 'post',
    path,
    summary: `A link that approves the visual changes of ${what} in the view`,
    description:
      "For the key holder who would rather look and approve in the browser: a page of the changes not yet approved, each with its images and an approve button, and one that approves them all. The link works for an hour and approves as the key that asked for it: the same scopes as the approve request (`preview`; `deploy` when a change is of the project's active deployment, 403 `insufficient_scope` here already), checked again when a change is approved, so revoking the key, or the view links of the run or suite run, ends the link. It is not the view's link and is never sent anywhere else: give it to no one. No body.",
    auth: 'apiKey',
    scope: 'preview',
    params: pathParams(param),
    idempotent: false,
    conditionalGet: false,
    success: { status: 200, description: 'The link and when it expires', schema: ['VisualApprovalLink'] },
    problems: { '404': ['not_found'] },
    documented: true,
  });
}

export const VISUAL_ROUTES = {
  approveRunVisualChanges: approveVisual(
    'approveRunVisualChanges',
    '/api/v1/runs/{runId}/visual-changes/approve',
    'runId',
    'a run',
  ),
  approveSuiteRunVisualChanges: approveVisual(
    'approveSuiteRunVisualChanges',
    '/api/v1/suite-runs/{suiteRunId}/visual-changes/approve',
    'suiteRunId',
    "a suite run's runs",
  ),
  issueRunApprovalLink: approvalLink(
    'issueRunApprovalLink',
    '/api/v1/runs/{runId}/visual-changes/approval-link',
    'runId',
    'a run',
  ),
  issueSuiteRunApprovalLink: approvalLink(
    'issueSuiteRunApprovalLink',
    '/api/v1/suite-runs/{suiteRunId}/visual-changes/approval-link',
    'suiteRunId',
    "a suite run's runs",
  ),
};
