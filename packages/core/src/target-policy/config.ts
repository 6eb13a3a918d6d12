import { ConfigError, type ArtifactStoreConfig } from '../env';
import { createTargetPolicy, type ProtectedEndpoint, type TargetPolicy } from './policy';
import { protectedEndpointsFromUrls, resolveProtectedEndpoints, systemLookup, type LookupAll } from './resolve';
import { parseTargetRules, TargetRuleError, type TargetRule } from './rules';

type Env = Record<string, string | undefined>;

/** The deployment's target network policy as its environment states it (see docs/NETWORK_POLICY.md). */
export interface TargetPolicyConfig {
  /** TARGET_ALLOW: what the default-closed policy opens (comma-separated CIDRs, addresses, names, `*.domain`). */
  allow: TargetRule[];
  /** TARGET_DENY: what it closes on top of the default; deny wins over allow. */
  deny: TargetRule[];
  /** The deployment's own Postgres, Redis and API: denied whatever TARGET_ALLOW says. */
  protectedEndpoints: ProtectedEndpoint[];
}

/** The loopback addresses a `localhost` endpoint stands for, so a target spelled by address is caught without DNS. */
function withLoopbackAliases(endpoints: readonly ProtectedEndpoint[]): ProtectedEndpoint[] {
  const out = [...endpoints];
  for (const { host, port } of endpoints) {
    if (host === 'localhost') out.push({ host: '127.0.0.1', port }, { host: '::1', port });
  }
  return out;
}

function readRules(env: Env, name: 'TARGET_ALLOW' | 'TARGET_DENY'): TargetRule[] {
  try {
    return parseTargetRules(env[name], name);
  } catch (error) {
    if (error instanceof TargetRuleError) throw new ConfigError(error.message);
    throw error;
  }
}

/**
 * Reads TARGET_ALLOW and TARGET_DENY (a bad item stops the process with a ConfigError naming the
 * variable and the item) and derives the protected endpoints from the deployment's own URLs: the
 * database, Redis, the API's public URL, the API's port on loopback when PORT is set, and the
 * artifact store's own endpoint when it has one (an S3-compatible server inside the network).
 */
export function readTargetPolicyConfig(
  env: Env,
  own: { databaseUrl: string; redisUrl: string; publicBaseUrl: string; artifacts?: ArtifactStoreConfig },
): TargetPolicyConfig {
  const port = env.PORT !== undefined && /^\d+$/.test(env.PORT) ? Number(env.PORT) : 0;
  const apiOnLoopback = port > 0 ? [`http://localhost:${port}`] : [];
  const objectStore = own.artifacts?.kind === 's3' && own.artifacts.endpoint ? [own.artifacts.endpoint] : [];
  return {
    allow: readRules(env, 'TARGET_ALLOW'),
    deny: readRules(env, 'TARGET_DENY'),
    protectedEndpoints: withLoopbackAliases(
      protectedEndpointsFromUrls([own.databaseUrl, own.redisUrl, own.publicBaseUrl, ...apiOnLoopback, ...objectStore]),
    ),
  };
}

/** The policy of a configuration, judging names without DNS (the API's enqueue check). */
export function targetPolicyOf(config: TargetPolicyConfig): TargetPolicy {
  return createTargetPolicy(config);
}

/**
 * The policy of a configuration with each protected endpoint named by a host name also known by
 * the addresses it resolves to now (the worker's policy, which judges resolved addresses).
 */
export async function resolveTargetPolicy(
  config: TargetPolicyConfig,
  lookup: LookupAll = systemLookup,
): Promise<TargetPolicy> {
  const protectedEndpoints = await resolveProtectedEndpoints(config.protectedEndpoints, lookup);
  return createTargetPolicy({ ...config, protectedEndpoints });
}
