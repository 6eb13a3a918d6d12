/**
 * Ports a browser refuses to connect to whatever the scheme: Chromium's restricted list
 * (`kRestrictedPorts` in `net/base/port_util.cc`, which includes 0) joined with the Fetch
 * standard's "bad port" list (https://fetch.spec.whatwg.org/#port-blocking, which adds 4190 and
 * 6679). Requests the worker makes itself obey it too, so a run cannot reach a mail, SSH or
 * database port through the Node side either.
 */
const UNSAFE_PORTS: ReadonlySet<number> = new Set([
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** True when a browser would refuse the port (see {@link UNSAFE_PORTS}), or it is not a TCP port at all. */
export function isUnsafePort(port: number): boolean {
  return !Number.isInteger(port) || port < 0 || port > 65_535 || UNSAFE_PORTS.has(port);
}
