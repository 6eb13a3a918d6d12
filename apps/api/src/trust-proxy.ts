import { isIP } from 'node:net';
import { ConfigError } from '@testrun/core/env';

/**
 * Which proxies in front of the API are trusted to say who the client is (express's `trust proxy`):
 * none, a number of hops, or the addresses of the proxies.
 */
export type TrustProxy = false | number | string[];

/** Ranges proxy-addr knows by name. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrRange(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  if (rest.length > 0) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * Reads TRUST_PROXY: `false` or `0` (default: X-Forwarded-For is ignored), a number of proxy hops
 * (the client address is the right-most X-Forwarded-For entry the hops did not add, so a client
 * cannot choose it by sending its own header), or a comma-separated list of the proxies' addresses
 * and CIDRs. `true` means one hop: trusting every hop would let a rotating X-Forwarded-For choose
 * the address the failed-authentication limit counts.
 */
export function readTrustProxy(env: Record<string, string | undefined>): TrustProxy {
  const raw = (env.TRUST_PROXY ?? '').trim();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true') return 1;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops > 10) throw new ConfigError(`TRUST_PROXY must be at most 10 hops, got ${hops}`);
    return hops;
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  const bad = entries.find((entry) => !isAddressOrRange(entry));
  if (bad !== undefined) {
    throw new ConfigError(
      `TRUST_PROXY must be false, a number of proxy hops, or a comma-separated list of proxy addresses or CIDRs; "${bad}" is none of these`,
    );
  }
  return entries;
}
