import {
  resolveTargetPolicy,
  systemLookup,
  type Logger,
  type LookupAll,
  type TargetPolicy,
  type TargetPolicyConfig,
} from '@testrun/core';
import { EgressProxy, egressProxyLaunchArgs, type BlockedRequest } from './egress-proxy';

/** A worker process's egress: its proxy, the Chromium flags that route through it, and the policy. */
export interface WorkerEgress {
  proxy: EgressProxy;
  launchArgs: string[];
  policy: TargetPolicy;
}

/**
 * Starts the worker's egress proxy with the deployment's policy (protected endpoints named by host
 * name are also protected by the addresses they resolve to now). Every refused request is logged
 * with its host and rule, never anything the target would have answered.
 */
export async function startEgress(
  config: TargetPolicyConfig,
  logger: Logger,
  lookup: LookupAll = systemLookup,
): Promise<WorkerEgress> {
  const policy = await resolveTargetPolicy(config, lookup);
  const proxy = new EgressProxy({
    policy,
    lookup,
    onBlocked: (blocked: BlockedRequest) =>
      logger.warn('request blocked by the target network policy', {
        runId: blocked.runId.replace(/\.\d+$/, ''),
        host: blocked.host,
        port: blocked.port,
        rule: blocked.rule,
      }),
  });
  await proxy.start();
  return { proxy, launchArgs: egressProxyLaunchArgs(proxy.url), policy };
}
