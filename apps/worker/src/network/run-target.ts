import type { PageEvent } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import type { RunOutcome } from '@testrun/core/runs';
import { narrowPolicy, parseTargetRules, type TargetPolicy } from '@testrun/core/target-policy';
import type { BlockedRequest, OpenRunOptions, RunEgress } from './egress-proxy';

/** Where a run's browser context gets its way out: the worker's egress proxy (see EgressProxy). */
export interface EgressSource {
  openRun(runId: string, options?: OpenRunOptions): RunEgress;
}

/** What a refusal says about a target: its host and the policy's sentence naming host and rule. */
export type Refused = Pick<BlockedRequest, 'host' | 'detail'>;

/**
 * What a refusal says when the run's browser asked for a target the network policy refuses: the host
 * and the rule (`detail`), never anything the target answered or whether anything listens there.
 */
export function blockedMessage(refused: Refused): string {
  return `a request to ${refused.host} was blocked by the target network policy: ${refused.detail}`;
}

/** The run's outcome when its base URL itself is refused: no browser context is opened at all. */
export function baseUrlBlockedOutcome(refused: Refused): RunOutcome {
  return {
    status: 'error',
    code: 'target_blocked',
    message: blockedMessage(refused),
    resultSummary: `Error: the run's target ${refused.host} is blocked by the target network policy (${refused.detail}).`,
  };
}

/**
 * The requests the network policy refused while a run ran, as page events of their own kind (shown
 * and counted by the run's view and the API), their texts masked by `mask`. The proxy does not say
 * when each was made: they are dated `at`, when the run learns of them.
 */
export function blockedEvents(
  blocked: readonly Pick<BlockedRequest, 'host' | 'port' | 'detail'>[] | undefined,
  mask: (text: string) => string,
  at: Date,
): PageEvent[] {
  return (blocked ?? []).map((b) => ({
    kind: 'blocked',
    at,
    message: mask(b.detail),
    url: mask(`${b.host}:${b.port}`),
    method: null,
    status: null,
  }));
}

/** The refusal of a URL the run is about to open, or `undefined` when the policy allows it (or there is none). */
export function refusalOf(policy: TargetPolicy | undefined, url: string): Refused | undefined {
  const decision = policy?.checkUrl(url);
  return decision === undefined || decision.allowed ? undefined : decision;
}

/**
 * The policy of one run: the deployment's, narrowed by the workspace's own denied targets (the
 * admin CLI's `workspace set --target-deny`). A workspace can only close more, never open.
 */
export async function runPolicy(db: Db, policy: TargetPolicy, workspaceId: string): Promise<TargetPolicy> {
  const workspace = await db.workspace.findUnique({ where: { id: workspaceId }, select: { targetDeny: true } });
  const deny = parseTargetRules(workspace?.targetDeny ?? undefined, 'the workspace target deny list');
  return deny.length > 0 ? narrowPolicy(policy, { deny }) : policy;
}
