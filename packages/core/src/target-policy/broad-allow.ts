import { categoriesOverlapping, categoryOf, effectiveAddresses, parseAddress, type AddressCategory } from './address';
import type { LookupAll } from './resolve';
import type { TargetRule } from './rules';

/**
 * Where the machine's and the network's own services listen (databases, brokers, admin consoles):
 * an allow rule that opens every port of such an address opens all of them, not only the site
 * under test. `reserved` ranges (documentation, multicast) hold no such services.
 */
const INSIDE: ReadonlyMap<AddressCategory, { one: string; kind: string }> = new Map([
  ['loopback', { one: 'a loopback address', kind: 'loopback' }],
  ['private', { one: 'a private network address', kind: 'private network' }],
  ['link_local', { one: 'a link-local address', kind: 'link-local' }],
  ['unspecified', { one: 'the unspecified address (this machine)', kind: 'unspecified' }],
]);

/** More ports than this in one rule is a wide opening, whatever the first and last are. */
const WIDE_PORT_RANGE = 1024;

/** How long a host name of a rule may take to resolve at start before it is left unchecked. */
const LOOKUP_TIMEOUT_MS = 2000;

function openedPorts(rule: TargetRule): string | undefined {
  if (rule.ports === undefined) return 'every port';
  const count = rule.ports.last - rule.ports.first + 1;
  return count > WIDE_PORT_RANGE ? `${count} ports (${rule.ports.first}-${rule.ports.last})` : undefined;
}

function insideOnly(categories: readonly (AddressCategory | undefined)[]): AddressCategory[] {
  return [...new Set(categories)].filter(
    (category): category is AddressCategory => category !== undefined && INSIDE.has(category),
  );
}

function isLocalhostName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}

async function resolvedCategories(name: string, lookup: LookupAll): Promise<(AddressCategory | undefined)[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<[]>((resolve) => {
    timer = setTimeout(() => resolve([]), LOOKUP_TIMEOUT_MS);
  });
  try {
    const answers = await Promise.race([lookup(name).catch(() => []), timeout]);
    return answers.flatMap(({ address }) => {
      const parsed = parseAddress(address);
      return parsed ? effectiveAddresses(parsed).map(categoryOf) : [];
    });
  } finally {
    clearTimeout(timer);
  }
}

/** The inside categories a rule opens: by its addresses, or by what its host name resolves to now. */
async function categoriesOf(rule: TargetRule, lookup: LookupAll | undefined): Promise<AddressCategory[]> {
  switch (rule.kind) {
    case 'range':
      return insideOnly(categoriesOverlapping(rule.range));
    case 'address':
      return insideOnly(effectiveAddresses(rule.address).map(categoryOf));
    case 'host':
      if (isLocalhostName(rule.name)) return ['loopback'];
      return lookup ? insideOnly(await resolvedCategories(rule.name, lookup)) : [];
    case 'suffix':
      // A pattern names no host that can be resolved; only *.localhost is known to lead inside.
      return isLocalhostName(rule.suffix.slice(1)) ? ['loopback'] : [];
  }
}

/** The rule written with one port, as the warning suggests it. */
function narrowed(rule: TargetRule): string {
  switch (rule.kind) {
    case 'range': {
      const [network, bits] = rule.range;
      const whole = bits === (network.kind() === 'ipv4' ? 32 : 128);
      if (!whole) return `${network.toString()}/${bits}:<port>`;
      return network.kind() === 'ipv6' ? `[${network.toString()}]:<port>` : `${network.toString()}:<port>`;
    }
    case 'address':
      return rule.address.kind() === 'ipv6'
        ? `[${rule.address.toString()}]:<port>`
        : `${rule.address.toString()}:<port>`;
    case 'host':
      return `${rule.name}:<port>`;
    case 'suffix':
      return `*${rule.suffix}:<port>`;
  }
}

function describe(categories: readonly AddressCategory[]): string {
  const [first] = categories;
  if (categories.length === 1 && first !== undefined) return INSIDE.get(first)?.one ?? first;
  const kinds = categories.map((category) => INSIDE.get(category)?.kind ?? category);
  return `${kinds.slice(0, -1).join(', ')} and ${kinds.at(-1) ?? ''} addresses`;
}

/**
 * Warnings, one a rule, for the allow rules (`TARGET_ALLOW`) that open every port (or more than
 * 1024 ports) of a loopback, private, link-local or unspecified address: every service listening
 * there (a database, a message broker, an admin console) is then open to runs, not only the site
 * under test. Each names the rule and what to write instead. A host name is judged by what it
 * resolves to now (`lookup`, given up after 2 s); without `lookup` only `localhost` is. The
 * deployment's own services stay closed whatever the rules say; these are the others.
 */
export async function broadAllowWarnings(
  rules: readonly TargetRule[],
  options: { label?: string; lookup?: LookupAll } = {},
): Promise<string[]> {
  const label = options.label ?? 'TARGET_ALLOW';
  const warnings: string[] = [];
  for (const rule of rules) {
    const ports = openedPorts(rule);
    if (ports === undefined) continue;
    const categories = await categoriesOf(rule, options.lookup);
    if (categories.length === 0) continue;
    const what =
      rule.kind === 'host' && !isLocalhostName(rule.name)
        ? `${rule.name}, which resolves to ${describe(categories)}`
        : describe(categories);
    const instead = narrowed(rule);
    warnings.push(
      `${label}: "${rule.text}" opens ${ports} of ${what}, so runs can reach every service listening there ` +
        '(a database, a message broker, an admin console), not only the site under test; allow only the ' +
        `site's port instead: ${instead} (or a few ports, ${instead.replace('<port>', '<first>-<last>')}) ` +
        '(docs/NETWORK_POLICY.md)',
    );
  }
  return warnings;
}
