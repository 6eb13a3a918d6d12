import type { VisualApproval } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import { approveVisualChanges, type VisualTarget } from '@testrun/core/visual';
import { requireScope } from '../scopes';

/**
 * Approves a run's or a suite run's visual changes (docs/VISUAL.md): the route needs `preview`; a
 * change of the project's active deployment changes the project's baselines and needs `deploy`,
 * checked once the target is known to be of the workspace (another's is a 404 whatever the key).
 */
export function approveVisual(
  db: Db,
  context: { workspaceId: string; keyId: string; scopes: Parameters<typeof requireScope>[0]['scopes'] },
  target: VisualTarget,
  ids: readonly string[] | undefined,
): Promise<VisualApproval> {
  return approveVisualChanges(db, { workspaceId: context.workspaceId, target, ids, keyId: context.keyId }, (active) => {
    if (active) requireScope(context, 'deploy');
  });
}
