import { ConfigError, type ArtifactStoreConfig } from '../env';
import { parseAddress } from './address';
import { machineAddresses } from './machine';
import { createTargetPolicy, type ProtectedEndpoint, type TargetPolicy } from './policy';
import {
  protectedEndpointsFromUrls,
  resolveProtectedEndpoints,
  resolveProtectedHosts,
  systemLookup,
  type LookupAll,
} from './resolve';
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
  /**
   * The ports of the deployment's services (Postgres, Redis, PORT, METRICS_PORT, WORKER_HTTP_PORT,
   * and any own URL's port on this machine): refused on every address of this machine and of
   * `protectedHosts`.
   */
  protectedPorts: number[];
  /** The hosts of DATABASE_URL, REDIS_URL and the API's public URL (and, once resolved, their addresses). */
  protectedHosts: string[];
  /** Every address of this machine's interfaces when the configuration was read. */
  machineAddresses: string[];
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

/** A port variable's value when it names one port (not unset, `0` or `off`). */
function portOf(env: Env, name: 'PORT' | 'METRICS_PORT' | 'WORKER_HTTP_PORT'): number[] {
  const text = env[name]?.trim() ?? '';
  const port = /^\d{1,5}$/.test(text) ? Number(text) : 0;
  return port >= 1 && port <= 65_535 ? [port] : [];
}

/** Whether a configured host is this machine (its name, loopback, unspecified or an interface address). */
function isOnThisMachine(host: string, machine: readonly string[]): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const address = parseAddress(host);
  if (!address) return false;
  const range = address.range();
  return range === 'loopback' || range === 'unspecified' || machine.includes(address.toString());
}

/**
 * Reads TARGET_ALLOW and TARGET_DENY (a bad item stops the process with a ConfigError naming the
 * variable and the item) and derives what the deployment protects as its own: the endpoints of
 * the database, Redis, the API's public URL and the artifact store's own endpoint (an
 * S3-compatible server inside the network); and the services' ports (DATABASE_URL's, REDIS_URL's,
 * PORT, METRICS_PORT, WORKER_HTTP_PORT, and the public URL's or object store's port when it names
 * this machine) on every address of this machine and of the database's, Redis's and the API's
 * hosts. A service bound to every address, or reached through another address of its host, stays
 * closed.
 */
export function readTargetPolicyConfig(
  env: Env,
  own: { databaseUrl: string; redisUrl: string; publicBaseUrl: string; artifacts?: ArtifactStoreConfig },
): TargetPolicyConfig {
  const machine = machineAddresses();
  const objectStore = own.artifacts?.kind === 's3' && own.artifacts.endpoint ? [own.artifacts.endpoint] : [];
  const services = protectedEndpointsFromUrls([own.databaseUrl, own.redisUrl]);
  const urls = protectedEndpointsFromUrls([own.publicBaseUrl, ...objectStore]);
  const local = urls.filter((endpoint) => isOnThisMachine(endpoint.host, machine));
  const ports = [
    ...[...services, ...local].map((endpoint) => endpoint.port),
    ...portOf(env, 'PORT'),
    ...portOf(env, 'METRICS_PORT'),
    ...portOf(env, 'WORKER_HTTP_PORT'),
  ];
  const publicUrl = urls.slice(0, 1);
  return {
    allow: readRules(env, 'TARGET_ALLOW'),
    deny: readRules(env, 'TARGET_DENY'),
    protectedEndpoints: withLoopbackAliases([...services, ...urls]),
    protectedPorts: [...new Set(ports)],
    protectedHosts: [...new Set([...services, ...publicUrl].map((endpoint) => endpoint.host))],
    machineAddresses: machine,
  };
}

/** The policy of a configuration, judging names without DNS (the API's enqueue check). */
export function targetPolicyOf(config: TargetPolicyConfig): TargetPolicy {
  return createTargetPolicy(config);
}

/**
 * The configuration with each protected endpoint and host named by a host name also known by the
 * addresses it resolves to now, so a target that spells one of them by address is caught too.
 */
export async function resolveTargetPolicyConfig(
  config: TargetPolicyConfig,
  lookup: LookupAll = systemLookup,
): Promise<TargetPolicyConfig> {
  const protectedEndpoints = await resolveProtectedEndpoints(config.protectedEndpoints, lookup);
  const protectedHosts = await resolveProtectedHosts(config.protectedHosts, lookup);
  return { ...config, protectedEndpoints, protectedHosts };
}

/** The policy of a configuration with its protected names resolved (the worker's policy, which judges resolved addresses). */
export async function resolveTargetPolicy(
  config: TargetPolicyConfig,
  lookup: LookupAll = systemLookup,
): Promise<TargetPolicy> {
  return createTargetPolicy(await resolveTargetPolicyConfig(config, lookup));
}
