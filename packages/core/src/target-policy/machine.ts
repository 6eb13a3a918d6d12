import { networkInterfaces } from 'node:os';

/**
 * Every address of this machine's interfaces as the system lists them now (a pod's own address,
 * a host's LAN address, loopback). A service bound to every address answers on each of them.
 */
export function machineAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}
