import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/*
 * The @playwright/test versions a worker runs teams' tests on (docs/PLAYWRIGHT.md, "Playwright
 * versions"): the service's own, and those the operator's list installed beside it
 * (infra/playwright-versions.sh, PLAYWRIGHT_VERSIONS_DIR). A bundle runs on the version of the same
 * major.minor as the one it was made with, or else the nearest newer one the worker has.
 */

/** One @playwright/test with its playwright and playwright-core: their real directories. */
export interface PlaywrightPackages {
  test: string;
  playwright: string;
  core: string;
  version: string;
}

/** The version a bundle runs on, and the one it was made with (null: the bundle does not say). */
export interface ChosenPlaywright {
  packages: PlaywrightPackages;
  /** The @playwright/test the bundle was made with, from its manifest. */
  pinned: string | null;
  /** True when {@link packages} has the pinned major.minor (or the bundle names none). */
  exact: boolean;
}

function versionOf(testDir: string): string {
  return (JSON.parse(readFileSync(path.join(testDir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The packages of the @playwright/test at `testDir` (its playwright and playwright-core resolved from it). */
function packagesAt(testDir: string): PlaywrightPackages {
  const dirOf = (packageJson: string) => realpathSync(path.dirname(packageJson));
  const test = realpathSync(testDir);
  const playwright = dirOf(require.resolve('playwright/package.json', { paths: [test] }));
  const core = dirOf(require.resolve('playwright-core/package.json', { paths: [playwright] }));
  return { test, playwright, core, version: versionOf(test) };
}

let service: PlaywrightPackages | undefined;

/** The service's @playwright/test, playwright and playwright-core (the worker's own dependencies). */
export function servicePlaywright(): PlaywrightPackages {
  service ??= packagesAt(path.dirname(require.resolve('@playwright/test/package.json')));
  return service;
}

/** [major, minor, patch] of a version like 1.39.0 (a pre-release's suffix ignored); null when it is not one. */
function parts(version: string): [number, number, number] | null {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : null;
}

function compare(a: [number, number, number], b: [number, number, number]): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/**
 * Of `available`, the version a bundle made with `pinned` runs on: the newest patch of the same
 * major.minor; else the oldest newer one (the nearest in behaviour, and one that has every API the
 * tests were written against); else (pinned newer than all) the newest. The service's when `pinned`
 * is null or not a version.
 */
export function chooseVersion(
  pinned: string | null,
  available: readonly PlaywrightPackages[],
  fallback: PlaywrightPackages,
): ChosenPlaywright {
  const want = pinned === null ? null : parts(pinned);
  if (want === null) return { packages: fallback, pinned, exact: true };
  const known = available
    .map((packages) => ({ packages, at: parts(packages.version) }))
    .filter((entry): entry is { packages: PlaywrightPackages; at: [number, number, number] } => entry.at !== null)
    .sort((a, b) => compare(a.at, b.at));
  const same = known.filter(({ at }) => at[0] === want[0] && at[1] === want[1]).at(-1);
  if (same) return { packages: same.packages, pinned, exact: true };
  const newer = known.find(({ at }) => compare(at, want) > 0);
  const chosen = newer ?? known.at(-1);
  return { packages: chosen?.packages ?? fallback, pinned, exact: false };
}

/**
 * The versions a worker has: the service's and each `<dir>/<version>/node_modules/@playwright/test`
 * (read once; a folder that does not hold one is skipped).
 */
export class PlaywrightVersions {
  private installed: PlaywrightPackages[] | undefined;

  constructor(private readonly dir: string | null) {}

  /** Every version, oldest first (the service's included once). */
  list(): PlaywrightPackages[] {
    if (this.installed) return this.installed;
    const own = servicePlaywright();
    const found = new Map<string, PlaywrightPackages>([[own.version, own]]);
    let names: string[];
    try {
      names = this.dir === null ? [] : readdirSync(this.dir);
    } catch {
      names = [];
    }
    for (const name of names) {
      try {
        const packages = packagesAt(path.join(this.dir ?? '', name, 'node_modules', '@playwright', 'test'));
        if (!found.has(packages.version)) found.set(packages.version, packages);
      } catch {
        // Not an installed version (a partial install, a stray file): not offered.
      }
    }
    const sorted = [...found.values()].sort((a, b) =>
      compare(parts(a.version) ?? [0, 0, 0], parts(b.version) ?? [0, 0, 0]),
    );
    this.installed = sorted;
    return sorted;
  }

  /** The version the bundle extracted at `bundleDir` runs on, by the @playwright/test its manifest names. */
  async forBundle(bundleDir: string): Promise<ChosenPlaywright> {
    let pinned: string | null;
    try {
      const manifest = JSON.parse(await readFile(path.join(bundleDir, 'testrun-bundle.json'), 'utf8')) as {
        playwrightVersion?: unknown;
      };
      pinned = typeof manifest.playwrightVersion === 'string' ? manifest.playwrightVersion : null;
    } catch {
      pinned = null;
    }
    return chooseVersion(pinned, this.list(), servicePlaywright());
  }
}

/** The versions a worker that was given no folder has: the service's alone. */
export const SERVICE_VERSION_ONLY = new PlaywrightVersions(null);

/** Whether `packages` takes the test list as `--test-list` (1.56 and later), or by title (older). */
export function takesTestList(packages: PlaywrightPackages): boolean {
  const at = parts(packages.version);
  return at === null || compare(at, [1, 56, 0]) >= 0;
}
