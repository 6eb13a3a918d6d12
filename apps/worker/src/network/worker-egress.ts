import type { Logger } from '@testrun/core/logger';
import {
  broadAllowWarnings,
  resolveTargetPolicy,
  systemLookup,
  type LookupAll,
  type TargetPolicy,
  type TargetPolicyConfig,
} from '@testrun/core/target-policy';
import { isolateBrowserNetwork } from './browser-netns';
import { EgressProxy, egressProxyLaunchArgs, type BlockedRequest } from './egress-proxy';

/** BROWSER_NETWORK_ISOLATION: whether Chromium runs in a network namespace whose only way out is the proxy. */
export type BrowserNetworkIsolation = 'on' | 'off';

/** A worker process's egress: its proxy, how Chromium is launched to go through it, and the policy. */
export interface WorkerEgress {
  proxy: EgressProxy;
  launchArgs: string[];
  policy: TargetPolicy;
  /** For BrowserPool's `wrapExecutable`: starts Chromium in its network namespace (none when isolation is off). */
  wrapExecutable: ((executablePath: string) => string) | undefined;
  /** The proxy's Unix socket (isolation on), the way in from a network namespace; none with isolation off. */
  socketPath: string | undefined;
  /** Closes the proxy and removes the namespace's launchers and socket. */
  close(): Promise<void>;
}

/**
 * Starts the worker's egress proxy with the deployment's policy (protected endpoints named by host
 * name are also protected by the addresses they resolve to now). Every refused request is logged
 * with its host and rule, never anything the target would have answered. A TARGET_ALLOW rule that
 * opens every port of a loopback or private address (every service listening there) is named in
 * a warning, with what to write instead.
 *
 * With isolation on (the default) Chromium will run in a network namespace of its own whose only
 * way out is this proxy, so nothing a page does (WebRTC over UDP, DNS, QUIC) leaves any other way;
 * when that cannot be set up the worker does not start (BrowserIsolationError).
 */
export async function startEgress(
  config: TargetPolicyConfig,
  logger: Logger,
  lookup: LookupAll = systemLookup,
  isolation: BrowserNetworkIsolation = 'on',
): Promise<WorkerEgress> {
  const policy = await resolveTargetPolicy(config, lookup);
  for (const warning of await broadAllowWarnings(config.allow, { lookup })) logger.warn(warning);
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
  if (isolation === 'off') {
    logger.warn(
      'BROWSER_NETWORK_ISOLATION=off: Chromium shares the worker network, so pages can send WebRTC (UDP) ' +
        'and other non-HTTP traffic past the target network policy; only HTTP(S) and WebSockets go through the egress proxy',
    );
    return {
      proxy,
      launchArgs: egressProxyLaunchArgs(proxy.url),
      policy,
      wrapExecutable: undefined,
      socketPath: undefined,
      close: () => proxy.close(),
    };
  }
  let netns;
  try {
    netns = await isolateBrowserNetwork(proxy);
  } catch (error) {
    await proxy.close();
    throw error;
  }
  return {
    proxy,
    launchArgs: egressProxyLaunchArgs(proxy.url),
    policy,
    wrapExecutable: (executablePath) => netns.wrap(executablePath),
    socketPath: netns.socketPath,
    close: async () => {
      await proxy.close();
      await netns.close();
    },
  };
}
