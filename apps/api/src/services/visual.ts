import type { VisualApproval, VisualApprovalLink } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import { NotFoundError } from '@testrun/core/projects';
import type { DerivedKeys } from '@testrun/core/secrets';
import { loadViewLinkState } from '@testrun/core/view-links';
import { approvalUrl, approveVisualChanges, pendingApprovals, type VisualTarget } from '@testrun/core/visual';
import { requireScope } from '../scopes';

/** Who asks: the key's workspace, id and scopes. */
type Asker = { workspaceId: string; keyId: string; scopes: Parameters<typeof requireScope>[0]['scopes'] };

/**
 * Approves a run's or a suite run's visual changes (docs/VISUAL.md): the route needs `preview`; a
 * change of the project's active deployment changes the project's baselines and needs `deploy`,
 * checked once the target is known to be of the workspace (another's is a 404 whatever the key).
 */
export function approveVisual(
  db: Db,
  context: Asker,
  target: VisualTarget,
  ids: readonly string[] | undefined,
): Promise<VisualApproval> {
  return approveVisualChanges(db, { workspaceId: context.workspaceId, target, ids, keyId: context.keyId }, (active) => {
    if (active) requireScope(context, 'deploy');
  });
}

/**
 * A link that approves the target's changes in the view, for the key that asks (docs/VISUAL.md,
 * "Approve in the view"): refused as an approval would be (a change of the active deployment
 * needs `deploy`), so a key learns now, not on the page, that it may not approve them.
 */
export async function issueApprovalLink(
  deps: { db: Db; keys: DerivedKeys; publicBaseUrl: string; now: Date },
  context: Asker,
  target: VisualTarget,
): Promise<VisualApprovalLink> {
  const { pending, active } = await pendingApprovals(deps.db, context.workspaceId, target);
  if (active) requireScope(context, 'deploy');
  const subject = 'run' in target ? 'run' : 'suite-run';
  const id = 'run' in target ? target.run : target.suiteRun;
  const state = await loadViewLinkState(deps.db, subject, id);
  // pendingApprovals found it in the workspace a moment ago; deleted since, it is not found.
  if (!state) throw new NotFoundError(`No ${subject.replace('-', ' ')} ${id} in this workspace.`);
  const grant = { subject, id, keyId: context.keyId } as const;
  const link = approvalUrl(deps.publicBaseUrl, deps.keys.approval, grant, state.version, deps.now);
  return { approvalUrl: link.url, expires_at: link.expiresAt.toISOString(), pending_count: pending };
}
