import type { DbTx } from '@testrun/core/db';
import { narrowPolicy, parseTargetRules, targetPolicyOf, type TargetPolicy } from '@testrun/core/target-policy';
import type { ApiConfig } from '../config';
import { ApiError } from '../errors';

const policies = new WeakMap<ApiConfig['targetPolicy'], TargetPolicy>();

/** The deployment's policy for a configuration, built once (the API judges names without DNS at enqueue). */
export function enqueuePolicy(config: ApiConfig['targetPolicy']): TargetPolicy {
  let policy = policies.get(config);
  if (!policy) {
    policy = targetPolicyOf(config);
    policies.set(config, policy);
  }
  return policy;
}

/**
 * The enqueue check of a run's base URL: what the URL alone tells (scheme, port, a literal address
 * in any spelling, deny rules, the deployment's own services), narrowed by the workspace's own
 * denied targets. No DNS: a name is judged again, on its addresses, by the worker's egress proxy.
 * A refusal is a 422 `target_not_allowed` naming the host and the rule; nothing is created.
 */
export async function checkRunTarget(
  tx: DbTx,
  policy: TargetPolicy,
  workspaceId: string,
  baseUrl: string,
): Promise<void> {
  const decision = (await workspacePolicy(tx, policy, workspaceId)).checkUrl(baseUrl);
  if (!decision.allowed) {
    throw new ApiError('target_not_allowed', `The run's target is not allowed: ${decision.detail}.`);
  }
}

/** The deployment's policy narrowed by the workspace's own denied targets. */
export async function workspacePolicy(tx: DbTx, policy: TargetPolicy, workspaceId: string): Promise<TargetPolicy> {
  const workspace = await tx.workspace.findUnique({ where: { id: workspaceId }, select: { targetDeny: true } });
  const deny = parseTargetRules(workspace?.targetDeny ?? undefined, 'the workspace target deny list');
  return deny.length > 0 ? narrowPolicy(policy, { deny }) : policy;
}
