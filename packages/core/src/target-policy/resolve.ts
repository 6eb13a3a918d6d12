import { lookup as dnsLookup } from 'node:dns/promises';
import { parseAddress } from './address';
import type { ProtectedEndpoint, TargetPolicy, TargetRefusal } from './policy';

/** One address a name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (like `dns.lookup` with `all: true`). */
export type LookupAll = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The system resolver, in the order it answers (`verbatim`). */
export const systemLookup: LookupAll = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

/** A target the policy allowed: the addresses to connect to (checked already), in the resolver's order. */
export interface CheckedTarget {
  allowed: true;
  /** The host as the URL names it (a name, or an address without brackets): for Host and SNI. */
  host: string;
  port: number;
  /** Every address of the host, each allowed by the policy. Connect to these, never resolve again. */
  addresses: readonly ResolvedAddress[];
}

/** Thrown when a name does not resolve: a network failure, not a policy refusal. */
export class TargetUnresolvedError extends Error {
  override readonly name = 'TargetUnresolvedError';
  constructor(readonly host: string) {
    super(`${host} could not be resolved`);
  }
}

function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80;
}

/**
 * Checks a URL, resolves its host once and checks every address it resolved to. A name with any
 * denied address is refused as a whole (a name that points both outside and inside is not a
 * target). The caller connects to one of the returned addresses itself, so nothing can resolve
 * the name differently between the check and the connection.
 *
 * @throws TargetUnresolvedError when the name has no address.
 */
export async function resolveTarget(
  policy: TargetPolicy,
  input: string | URL,
  lookup: LookupAll = systemLookup,
): Promise<CheckedTarget | TargetRefusal> {
  const byUrl = policy.checkUrl(input);
  if (!byUrl.allowed) return byUrl;
  const url = typeof input === 'string' ? new URL(input) : input;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = portOf(url);
  const literal = parseAddress(host);
  let addresses: readonly ResolvedAddress[];
  if (literal) {
    addresses = [{ address: literal.toString(), family: literal.kind() === 'ipv4' ? 4 : 6 }];
  } else {
    try {
      addresses = await lookup(host);
    } catch {
      throw new TargetUnresolvedError(host);
    }
    if (addresses.length === 0) throw new TargetUnresolvedError(host);
  }
  for (const { address } of addresses) {
    const decision = policy.checkAddress(address, port, literal ? undefined : host);
    if (!decision.allowed) return decision;
  }
  return { allowed: true, host, port, addresses };
}

const DEFAULT_PORTS: ReadonlyMap<string, number> = new Map([
  ['postgres:', 5432],
  ['postgresql:', 5432],
  ['redis:', 6379],
  ['rediss:', 6379],
  ['http:', 80],
  ['https:', 443],
]);

/**
 * The protected endpoints named by the deployment's own connection URLs (`DATABASE_URL`,
 * `REDIS_URL`, the API's public URL): host and port of each, with the scheme's default port when
 * none is written. Unset entries are skipped.
 */
export function protectedEndpointsFromUrls(urls: readonly (string | undefined)[]): ProtectedEndpoint[] {
  const endpoints: ProtectedEndpoint[] = [];
  for (const text of urls) {
    if (text === undefined || text === '') continue;
    const url = new URL(text);
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const port = url.port === '' ? DEFAULT_PORTS.get(url.protocol) : Number(url.port);
    if (host === '' || port === undefined) throw new Error(`cannot tell host and port of a ${url.protocol} URL`);
    endpoints.push({ host, port });
  }
  return endpoints;
}

/**
 * Every address each distinct host name among `hosts` resolves to now, looked up once per name
 * (addresses are skipped; a name that does not resolve gets none).
 */
async function addressesOfNames(hosts: readonly string[], lookup: LookupAll): Promise<Map<string, string[]>> {
  const names = [...new Set(hosts)].filter((host) => !parseAddress(host));
  const answers = await Promise.all(names.map((name) => lookup(name).catch(() => [])));
  return new Map(names.map((name, i) => [name, (answers[i] ?? []).map(({ address }) => address)]));
}

/**
 * The endpoints plus, for each one named by a host name, every address that name resolves to now,
 * so the policy also refuses the deployment's services when a target spells them by address. A
 * name that does not resolve is kept by name only.
 */
export async function resolveProtectedEndpoints(
  endpoints: readonly ProtectedEndpoint[],
  lookup: LookupAll = systemLookup,
): Promise<ProtectedEndpoint[]> {
  const resolved = await addressesOfNames(
    endpoints.map((endpoint) => endpoint.host),
    lookup,
  );
  return [
    ...endpoints,
    ...endpoints.flatMap(({ host, port }) => (resolved.get(host) ?? []).map((address) => ({ host: address, port }))),
  ];
}

/** The hosts plus every address each one named by a host name resolves to now (kept by name when it does not resolve). */
export async function resolveProtectedHosts(
  hosts: readonly string[],
  lookup: LookupAll = systemLookup,
): Promise<string[]> {
  const resolved = await addressesOfNames(hosts, lookup);
  return [...new Set([...hosts, ...hosts.flatMap((host) => resolved.get(host) ?? [])])];
}
