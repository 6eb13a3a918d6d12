import type { LookupFunction } from 'node:net';
import {
  resolveTarget,
  systemLookup,
  TargetUnresolvedError,
  type LookupAll,
  type ResolvedAddress,
  type TargetPolicy,
  type TargetRefusal,
} from '@testrun/core/target-policy';

/** Where the Node side of a run may connect for a URL: one checked address, and the name for Host and SNI. */
export interface CheckedConnection {
  allowed: true;
  /** The address to connect to (already judged by the policy). */
  address: string;
  family: 4 | 6;
  port: number;
  /** The host as the URL names it: the Host header, and the TLS server name when it is a name. */
  host: string;
  /** Every checked address, in the resolver's order, for a caller that tries the next on failure. */
  addresses: readonly ResolvedAddress[];
}

/**
 * The policy's answer for a request the worker fetches itself (the path that scopes a run's headers
 * to its target): the URL's host resolved once and every address judged, ports browsers refuse
 * included. The caller connects to `address` with `host` as Host and SNI (see {@link pinnedLookup})
 * and must not resolve the name again.
 *
 * @throws TargetUnresolvedError when the name has no address.
 */
export async function resolveAndCheck(
  policy: TargetPolicy,
  url: string | URL,
  lookup: LookupAll = systemLookup,
): Promise<CheckedConnection | TargetRefusal> {
  const result = await resolveTarget(policy, url, lookup);
  if (!result.allowed) return result;
  const [first] = result.addresses;
  if (!first) throw new TargetUnresolvedError(result.host);
  return {
    allowed: true,
    address: first.address,
    family: first.family,
    port: result.port,
    host: result.host,
    addresses: result.addresses,
  };
}

/**
 * A `lookup` for `http.request`/`https.request`/`tls.connect` that answers only with the checked
 * address, so a request made by name (keeping its Host header and SNI) connects where the policy
 * looked and nowhere else.
 */
export function pinnedLookup(checked: CheckedConnection): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: checked.address, family: checked.family }]);
    else callback(null, checked.address, checked.family);
  };
}
