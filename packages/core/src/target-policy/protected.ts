import ipaddr from 'ipaddr.js';
import { addressInRange, parseAddress, sameAddress, type IpAddress, type IpRange } from './address';
import { canonicalHostName } from './rules';

/** One of the deployment's own services (Postgres, Redis, the API): denied whatever the allow rules say. */
export interface ProtectedEndpoint {
  /** Host name or address, as the deployment's configuration spells it. */
  host: string;
  port: number;
}

/** What the deployment protects as its own, whatever the allow rules say (see {@link ProtectedSet}). */
export interface ProtectedServices {
  /** Exact host and port pairs (the object store's endpoint, the API's public URL). */
  protectedEndpoints?: readonly ProtectedEndpoint[];
  /**
   * Ports of the deployment's own services (Postgres, Redis, the API, its metrics listener, the
   * worker's HTTP server). A service bound to every address answers on each of them, so these
   * ports are refused on every address of this machine and on every host in `protectedHosts`.
   */
  protectedPorts?: readonly number[];
  /** Names and addresses of the deployment's own hosts (those of DATABASE_URL, REDIS_URL, the API's URL). */
  protectedHosts?: readonly string[];
  /**
   * Addresses of this machine's interfaces (`os.networkInterfaces()`). Loopback (`127.0.0.0/8`,
   * `::1`) and the unspecified address (`0.0.0.0/8`, `::`) are this machine's in any case.
   */
  machineAddresses?: readonly string[];
}

/** Addresses that always lead to this machine: a connection to any of them reaches its listeners. */
const MACHINE_RANGES: readonly IpRange[] = ['127.0.0.0/8', '0.0.0.0/8', '::1/128', '::/128'].map((text) =>
  ipaddr.parseCIDR(text),
);

interface Host {
  name: string | undefined;
  address: IpAddress | undefined;
}

function readHost(text: string, what: string): Host {
  const address = parseAddress(text);
  const name = address ? undefined : canonicalHostName(text);
  if (!address && !name) throw new Error(`${what} "${text}" is not a host name or address`);
  return { name, address };
}

function readPort(port: number, what: string): number {
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`${what} has a port outside 1-65535: ${port}`);
  }
  return port;
}

function hostMatches(host: Host, name: string | undefined, addresses: readonly IpAddress[]): boolean {
  if (host.name !== undefined) return host.name === name;
  const address = host.address;
  return address !== undefined && addresses.some((each) => sameAddress(each, address));
}

/**
 * The deployment's own services as the policy guards them: exact endpoints, and the service ports
 * on every address of this machine and of the deployment's hosts. A target covered here is refused
 * as `protected_endpoint` whatever the allow rules say.
 */
export class ProtectedSet {
  private readonly endpoints: readonly (Host & { port: number })[];
  private readonly ports: ReadonlySet<number>;
  private readonly hosts: readonly Host[];

  constructor(services: ProtectedServices) {
    this.endpoints = (services.protectedEndpoints ?? []).map(({ host, port }) => ({
      ...readHost(host, 'protected endpoint host'),
      port: readPort(port, `protected endpoint "${host}"`),
    }));
    this.ports = new Set((services.protectedPorts ?? []).map((port) => readPort(port, 'a protected service')));
    this.hosts = [
      ...(services.protectedHosts ?? []).map((host) => readHost(host, 'protected host')),
      ...(services.machineAddresses ?? []).map((address) => readHost(address, 'machine address')),
    ];
  }

  /** Whether `port` of the host `name` (canonical, when it is a name) or of `addresses` is protected. */
  covers(name: string | undefined, addresses: readonly IpAddress[], port: number): boolean {
    if (this.endpoints.some((endpoint) => endpoint.port === port && hostMatches(endpoint, name, addresses))) {
      return true;
    }
    if (!this.ports.has(port)) return false;
    if (addresses.some((address) => MACHINE_RANGES.some((range) => addressInRange(address, range)))) return true;
    return this.hosts.some((host) => hostMatches(host, name, addresses));
  }
}
