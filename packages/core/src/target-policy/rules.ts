import ipaddr from 'ipaddr.js';
import { addressInRange, parseAddress, sameAddress, type IpAddress, type IpRange } from './address';

/** The ports a rule covers, `first` to `last` inclusive (one port: both the same). */
interface PortRange {
  first: number;
  last: number;
}

/**
 * One item of `TARGET_ALLOW`, `TARGET_DENY` or a workspace's rules. `text` is the item as written,
 * so a refusal can name the rule that made it. `ports` unset: every port.
 */
export type TargetRule =
  | { kind: 'range'; text: string; range: IpRange; ports?: PortRange }
  | { kind: 'address'; text: string; address: IpAddress; ports?: PortRange }
  | { kind: 'host'; text: string; name: string; ports?: PortRange }
  | { kind: 'suffix'; text: string; suffix: string; ports?: PortRange };

/** A rule list that could not be read; the message names the item and what is wrong with it. */
export class TargetRuleError extends Error {
  override readonly name = 'TargetRuleError';
  constructor(
    readonly item: string,
    reason: string,
    label: string,
  ) {
    super(`${label}: "${item}" ${reason}`);
  }
}

const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * The host name as a URL would carry it: lower case, punycode for international names, no trailing
 * dot. `undefined` when it is not a valid host name.
 */
export function canonicalHostName(name: string): string | undefined {
  let hostname: string;
  try {
    hostname = new URL(`http://${name}/`).hostname;
  } catch {
    return undefined;
  }
  const bare = hostname.replace(/\.+$/, '');
  return HOST_NAME.test(bare) ? bare : undefined;
}

function parsePort(text: string, item: string, label: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65_535)) throw new TargetRuleError(item, 'has a port outside 1-65535', label);
  return port;
}

/** Reads `8080` or a range `3000-3999` (both ends included). */
function parsePorts(text: string, item: string, label: string): PortRange {
  const dash = text.indexOf('-');
  if (dash === -1) {
    const port = parsePort(text, item, label);
    return { first: port, last: port };
  }
  const first = parsePort(text.slice(0, dash), item, label);
  const last = parsePort(text.slice(dash + 1), item, label);
  if (first > last) throw new TargetRuleError(item, 'has a port range whose first port is above its last', label);
  return { first, last };
}

/** Reads a CIDR range, optionally followed by ports: `10.0.0.0/8`, `10.0.0.0/8:8080`, `fd00::/8:3000-3999`. */
function parseRange(item: string, label: string): TargetRule {
  const slash = item.indexOf('/');
  const network = item.slice(0, slash);
  // The prefix length is digits only, so a colon after it can only start the ports.
  const afterSlash = item.slice(slash + 1);
  const colon = afterSlash.indexOf(':');
  const bitsText = colon === -1 ? afterSlash : afterSlash.slice(0, colon);
  const ports = colon === -1 ? undefined : parsePorts(afterSlash.slice(colon + 1), item, label);
  const address = parseAddress(network);
  if (!address || network.startsWith('[')) {
    throw new TargetRuleError(item, 'is not a CIDR range (write e.g. 10.0.0.0/8 or fd00::/8)', label);
  }
  const max = address.kind() === 'ipv4' ? 32 : 128;
  const bits = /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : NaN;
  if (!(bits >= 0 && bits <= max)) {
    throw new TargetRuleError(item, `has a prefix length outside 0-${max}`, label);
  }
  const rule: TargetRule = { kind: 'range', text: item, range: [address, bits] };
  return ports === undefined ? rule : { ...rule, ports };
}

/**
 * Splits `host:ports`, `[v6]:ports`, `[v6]` or a bare IPv6 address into host and optional ports
 * (`8080` or `3000-3999`).
 */
function splitHostPort(item: string, label: string): { host: string; ports?: PortRange } {
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(item);
  if (bracketed) {
    const host = bracketed[1] ?? '';
    const portText = bracketed[2];
    return portText === undefined ? { host } : { host, ports: parsePorts(portText, item, label) };
  }
  const colons = item.split(':').length - 1;
  if (colons === 0) return { host: item };
  if (colons > 1) return { host: item }; // A bare IPv6 address: no port can follow it unbracketed.
  const at = item.lastIndexOf(':');
  return { host: item.slice(0, at), ports: parsePorts(item.slice(at + 1), item, label) };
}

/**
 * Reads one rule: a CIDR range (`10.0.0.0/8`, `fd00::/8`), an address (`10.1.2.3`, `fd00::1`), a
 * host name (`staging.example.com`) or a pattern for every sub-domain of a name (`*.example.com`,
 * not `example.com` itself), each optionally followed by a port or a range of ports
 * (`10.1.2.3:8080`, `[fd00::1]:8080`, `staging.example.com:3000-3999`, `10.0.0.0/8:443`).
 */
export function parseTargetRule(raw: string, label = 'target rule'): TargetRule {
  const item = raw.trim();
  if (item === '') throw new TargetRuleError(raw, 'is empty', label);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(item)) {
    throw new TargetRuleError(item, 'is a URL; write a host name, address or CIDR range', label);
  }
  if (item.includes('/')) return parseRange(item, label);
  const { host, ports } = splitHostPort(item, label);
  const withPort = <T extends TargetRule>(rule: T): T => (ports === undefined ? rule : { ...rule, ports });
  if (host.startsWith('*.')) {
    const suffix = canonicalHostName(host.slice(2));
    if (!suffix || parseAddress(suffix)) {
      throw new TargetRuleError(item, 'is not a valid pattern (write *.example.com)', label);
    }
    return withPort({ kind: 'suffix', text: item, suffix: `.${suffix}` });
  }
  if (host.includes('*')) {
    throw new TargetRuleError(item, 'may only use * as its first label (write *.example.com)', label);
  }
  const address = parseAddress(host);
  if (address) return withPort({ kind: 'address', text: item, address });
  if (ipaddr.isValid(host) || /^[\d.]+$/.test(host) || /^0x/i.test(host)) {
    throw new TargetRuleError(item, 'is not a canonical address (write IPv4 as four decimal parts)', label);
  }
  const name = canonicalHostName(host);
  if (!name) throw new TargetRuleError(item, 'is not a valid host name, address or CIDR range', label);
  return withPort({ kind: 'host', text: item, name });
}

/**
 * Reads a comma-separated rule list such as `TARGET_ALLOW` or `TARGET_DENY`. Blank items (a
 * trailing comma, extra spaces) are ignored; any other bad item throws a {@link TargetRuleError}
 * naming it and `label` (the variable it came from).
 */
export function parseTargetRules(text: string | undefined, label = 'target rules'): TargetRule[] {
  if (text === undefined) return [];
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map((item) => parseTargetRule(item, label));
}

function portMatches(rule: { ports?: PortRange }, port: number): boolean {
  return rule.ports === undefined || (port >= rule.ports.first && port <= rule.ports.last);
}

/** Whether `rule` covers the host name `name` (canonical, see {@link canonicalHostName}) on `port`. */
export function ruleMatchesName(rule: TargetRule, name: string, port: number): boolean {
  switch (rule.kind) {
    case 'host':
      return rule.name === name && portMatches(rule, port);
    case 'suffix':
      return name.endsWith(rule.suffix) && portMatches(rule, port);
    case 'range':
    case 'address':
      return false;
  }
}

/** Whether `rule` covers the address `address` on `port`. */
export function ruleMatchesAddress(rule: TargetRule, address: IpAddress, port: number): boolean {
  switch (rule.kind) {
    case 'range':
      return addressInRange(address, rule.range) && portMatches(rule, port);
    case 'address':
      return sameAddress(rule.address, address) && portMatches(rule, port);
    case 'host':
    case 'suffix':
      return false;
  }
}

/** Whether the list holds a rule that can only be judged once an address is known. */
export function hasAddressRules(rules: readonly TargetRule[]): boolean {
  return rules.some((rule) => rule.kind === 'range' || rule.kind === 'address');
}
