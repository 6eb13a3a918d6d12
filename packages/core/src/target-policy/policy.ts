import ipaddr from 'ipaddr.js';
import {
  categoryOf,
  effectiveAddresses,
  isMetadataAddress,
  METADATA_HOST_NAMES,
  parseAddress,
  type AddressCategory,
  type IpAddress,
} from './address';
import { canonicalHostName, hasAddressRules, ruleMatchesAddress, ruleMatchesName, type TargetRule } from './rules';
import { ProtectedSet, type ProtectedEndpoint, type ProtectedServices } from './protected';
import { isUnsafePort } from './unsafe-ports';

export type { ProtectedEndpoint };

/** Why a target was refused. Stable names: a run's failure and the enqueue refusal carry them. */
export type TargetBlockRule =
  | 'invalid_url'
  | 'invalid_address'
  | 'scheme'
  | 'unsafe_port'
  | 'metadata'
  | 'protected_endpoint'
  | 'deny_list'
  | 'workspace_deny'
  | 'workspace_allow_list'
  | AddressCategory;

/**
 * The answer of a policy. A refusal names the host and the rule in `detail`, a sentence fit for a
 * run's summary: it never says whether anything listens at the target.
 */
export type TargetDecision =
  { allowed: true } | { allowed: false; rule: TargetBlockRule; host: string; detail: string };

/** A refusal (the `allowed: false` half of {@link TargetDecision}). */
export type TargetRefusal = Extract<TargetDecision, { allowed: false }>;

/**
 * Options of {@link createTargetPolicy}. The deployment's own services ({@link ProtectedServices}:
 * exact endpoints, and service ports on every address of this machine and of the deployment's
 * hosts) are refused whatever `allow` says. Give both the names and the addresses they resolve to
 * (see `resolveTargetPolicyConfig`), so a target spelled either way is caught.
 */
export interface TargetPolicyOptions extends ProtectedServices {
  /**
   * Rules that open what the default denies (`TARGET_ALLOW`), e.g. `127.0.0.1:8080` for a test
   * set-up whose site runs on loopback (a rule without a port opens every service there). They never open metadata addresses, protected endpoints, unsafe
   * ports or anything a deny rule covers. Default none.
   */
  allow?: readonly TargetRule[];
  /** Rules that close more than the default (`TARGET_DENY`). Deny wins over allow. Default none. */
  deny?: readonly TargetRule[];
}

/**
 * Decides which network targets a run may reach. `checkUrl` judges what a URL alone reveals (for
 * the enqueue check and before the worker resolves anything); `checkAddress` judges each address a
 * name resolved to, which is the check that holds against names pointing inside.
 */
export interface TargetPolicy {
  /** Judges a URL: its scheme, port and host (a literal address is judged fully; a name by its rules). */
  checkUrl(url: string | URL): TargetDecision;
  /**
   * Judges one address a connection would go to, with the port and the host name it was resolved
   * from (when there was one), after DNS resolution.
   */
  checkAddress(address: string, port: number, host?: string): TargetDecision;
}

/** Schemes a run may target. Everything else (file:, chrome:, view-source:, data:, javascript:, ftp:) is refused. */
const TARGET_SCHEMES: ReadonlyMap<string, number> = new Map([
  ['http:', 80],
  ['https:', 443],
  ['ws:', 80],
  ['wss:', 443],
]);

/**
 * What a check looks at: the host as shown in a refusal, its canonical name when it is a name, the
 * addresses it may reach (empty while a name is unresolved) and the port.
 */
interface Subject {
  host: string;
  name: string | undefined;
  addresses: IpAddress[];
  port: number;
  /** True when `addresses` came from resolving `name`. */
  resolved: boolean;
}

const CATEGORY_TEXT: Record<AddressCategory, string> = {
  unspecified: 'the unspecified address',
  loopback: 'a loopback address',
  private: 'a private network address',
  link_local: 'a link-local address',
  reserved: 'a reserved, non-public address',
};

function refuse(rule: TargetBlockRule, host: string, detail: string): TargetRefusal {
  return { allowed: false, rule, host, detail: `${detail} (rule: ${rule})` };
}

/**
 * A refusal of a non-public address is the one an operator can lift (loopback, private ranges: a
 * site under test on this machine or the office network), so it says how: the variable, a value
 * that opens just this host on just this port (never every service listening there), and that both
 * the API (enqueue check) and the worker (egress) read it.
 */
function withAllowHint(refusal: TargetRefusal, subject: Subject): TargetRefusal {
  const host = subject.name ?? subject.host;
  const value = `${host.includes(':') ? `[${host}]` : host}:${subject.port}`;
  return {
    ...refusal,
    detail: `${refusal.detail}; to allow it, set TARGET_ALLOW=${value} in the environment of the API and of every worker (docs/NETWORK_POLICY.md)`,
  };
}

function isLocalhostName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}

function matchesAny(rules: readonly TargetRule[], subject: Subject, address?: IpAddress): TargetRule | undefined {
  return rules.find(
    (rule) =>
      (subject.name !== undefined && ruleMatchesName(rule, subject.name, subject.port)) ||
      (address
        ? ruleMatchesAddress(rule, address, subject.port)
        : subject.addresses.some((each) => ruleMatchesAddress(rule, each, subject.port))),
  );
}

/** The subject of a URL, or the refusal of a URL that is not a network target. */
function subjectOfUrl(input: string | URL): Subject | TargetRefusal {
  let url: URL;
  try {
    url = typeof input === 'string' ? new URL(input) : input;
  } catch {
    return refuse('invalid_url', '', 'the target is not a valid URL');
  }
  const defaultPort = TARGET_SCHEMES.get(url.protocol);
  if (defaultPort === undefined) {
    return refuse('scheme', url.hostname, `${url.protocol} URLs are not allowed as targets`);
  }
  const port = url.port === '' ? defaultPort : Number(url.port);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === '') return refuse('invalid_url', '', 'the target URL has no host');
  // The URL parser has already turned decimal, hex and octal IPv4 spellings into dotted decimal.
  const address = parseAddress(host);
  if (address) return { host, name: undefined, addresses: effectiveAddresses(address), port, resolved: false };
  const name = canonicalHostName(host);
  if (!name) return refuse('invalid_url', host, `${host} is not a valid host name`);
  return { host, name, addresses: [], port, resolved: false };
}

function subjectOfAddress(address: string, port: number, host: string | undefined): Subject | TargetRefusal {
  const parsed = parseAddress(address);
  if (!parsed)
    return refuse('invalid_address', host ?? address, `${host ?? address} has an address that cannot be read`);
  const name = host !== undefined && !parseAddress(host) ? canonicalHostName(host) : undefined;
  const shown = host ?? parsed.toString();
  return { host: shown, name, addresses: effectiveAddresses(parsed), port, resolved: name !== undefined };
}

function isRefusal(value: Subject | TargetRefusal): value is TargetRefusal {
  return 'allowed' in value;
}

class RulesTargetPolicy implements TargetPolicy {
  private readonly allow: readonly TargetRule[];
  private readonly deny: readonly TargetRule[];
  private readonly guarded: ProtectedSet;

  constructor(options: TargetPolicyOptions) {
    this.allow = options.allow ?? [];
    this.deny = options.deny ?? [];
    this.guarded = new ProtectedSet(options);
  }

  checkUrl(url: string | URL): TargetDecision {
    const subject = subjectOfUrl(url);
    if (isRefusal(subject)) return subject;
    if (subject.name !== undefined && isLocalhostName(subject.name)) {
      // Browsers answer *.localhost with loopback themselves: judge it as the loopback addresses.
      const decisions = ['127.0.0.1', '::1'].map((address) =>
        this.judge({ ...subject, addresses: [ipaddr.parse(address)], resolved: true }),
      );
      return decisions.find((decision) => decision.allowed) ?? decisions[0] ?? { allowed: true };
    }
    return this.judge(subject);
  }

  checkAddress(address: string, port: number, host?: string): TargetDecision {
    const subject = subjectOfAddress(address, port, host);
    return isRefusal(subject) ? subject : this.judge(subject);
  }

  private judge(subject: Subject): TargetDecision {
    const { host, name, addresses, port } = subject;
    if (isUnsafePort(port)) return refuse('unsafe_port', host, `port ${port} of ${host} is a port browsers refuse`);
    if ((name !== undefined && METADATA_HOST_NAMES.has(name)) || addresses.some(isMetadataAddress)) {
      return refuse('metadata', host, `${host} is a cloud metadata endpoint`);
    }
    if (this.guarded.covers(name, addresses, port))
      return refuse('protected_endpoint', host, `${host}:${port} is one of this deployment's own services`);
    const denied = matchesAny(this.deny, subject);
    if (denied) return refuse('deny_list', host, `${host} matches the denied target "${denied.text}"`);
    if (name !== undefined && this.allow.some((rule) => ruleMatchesName(rule, name, port))) return { allowed: true };
    for (const address of addresses) {
      const category = categoryOf(address);
      if (category === undefined || matchesAny(this.allow, { ...subject, name: undefined }, address)) continue;
      const verb = subject.resolved ? 'resolves to' : 'is';
      return withAllowHint(refuse(category, host, `${host} ${verb} ${CATEGORY_TEXT[category]}`), subject);
    }
    return { allowed: true };
  }
}

/**
 * The policy every run's traffic obeys. By default it denies loopback, private, link-local,
 * reserved and unspecified addresses, cloud metadata endpoints, the protected endpoints, ports
 * browsers refuse, and every scheme but http, https, ws and wss. `allow` re-opens ranges or names
 * the default closed; `deny` closes more and wins over `allow`; metadata endpoints, protected
 * endpoints and unsafe ports stay closed whatever `allow` says.
 */
export function createTargetPolicy(options: TargetPolicyOptions = {}): TargetPolicy {
  return new RulesTargetPolicy(options);
}

/** A workspace's own rules: they can only narrow the deployment's policy. */
export interface WorkspaceTargetRules {
  /** When not empty, the workspace's runs may reach only these targets (within the deployment's policy). */
  allow?: readonly TargetRule[];
  /** Targets the workspace's runs may never reach. */
  deny?: readonly TargetRule[];
}

function judgeWorkspace(rules: WorkspaceTargetRules, subject: Subject): TargetDecision {
  const deny = rules.deny ?? [];
  const allow = rules.allow ?? [];
  const denied = matchesAny(deny, subject);
  if (denied)
    return refuse(
      'workspace_deny',
      subject.host,
      `${subject.host} matches the workspace's denied target "${denied.text}"`,
    );
  if (allow.length === 0 || matchesAny(allow, subject)) return { allowed: true };
  // A name not yet resolved may still land in an allowed range: the address check decides.
  if (subject.addresses.length === 0 && hasAddressRules(allow)) return { allowed: true };
  return refuse('workspace_allow_list', subject.host, `${subject.host} is not among the workspace's allowed targets`);
}

/**
 * `policy` further restricted by a workspace's rules. Whatever the rules say, nothing the
 * deployment's policy refuses becomes allowed: the base policy is asked first and its refusal
 * stands.
 */
export function narrowPolicy(policy: TargetPolicy, rules: WorkspaceTargetRules): TargetPolicy {
  return {
    checkUrl(url) {
      const base = policy.checkUrl(url);
      if (!base.allowed) return base;
      const subject = subjectOfUrl(url);
      return isRefusal(subject) ? subject : judgeWorkspace(rules, subject);
    },
    checkAddress(address, port, host) {
      const base = policy.checkAddress(address, port, host);
      if (!base.allowed) return base;
      const subject = subjectOfAddress(address, port, host);
      return isRefusal(subject) ? subject : judgeWorkspace(rules, subject);
    },
  };
}
