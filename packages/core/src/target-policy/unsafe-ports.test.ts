import { isUnsafePort } from './unsafe-ports';

// Chromium's restricted ports (net/base/port_util.cc) and the Fetch standard's additions.
const CHROMIUM = [
  0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 5060, 5061, 6000,
  6566, 6665, 6666, 6667, 6668, 6669, 6697, 10080,
];
const FETCH_STANDARD_ADDITIONS = [4190, 6679];

it('refuses every port Chromium or the Fetch standard refuses', () => {
  for (const port of [...CHROMIUM, ...FETCH_STANDARD_ADDITIONS])
    expect([port, isUnsafePort(port)]).toEqual([port, true]);
});

it('refuses what is not a TCP port at all', () => {
  for (const port of [-1, 65_536, 80.5, Number.NaN]) expect(isUnsafePort(port)).toBe(true);
});

it('allows every other port', () => {
  const unsafe = new Set([...CHROMIUM, ...FETCH_STANDARD_ADDITIONS]);
  for (let port = 1; port <= 65_535; port += 1) {
    if (!unsafe.has(port)) expect(isUnsafePort(port)).toBe(false);
  }
});
