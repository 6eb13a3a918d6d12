import { Type, type Static } from '@sinclair/typebox';

// A Playwright bundle (docs/PLAYWRIGHT.md): the team's config, specs and what they import, as one
// deterministic .tar.gz the CLI packs and the API stores by its digest.

/** `sha256:` and the 64 lower-case hex digits of the SHA-256 of the bundle's .tar.gz bytes. */
export const BUNDLE_DIGEST_PATTERN = '^sha256:[0-9a-f]{64}$';

export const BundleDigest = Type.String({
  pattern: BUNDLE_DIGEST_PATTERN,
  description: "`sha256:<64 hex>`: the SHA-256 of the bundle's .tar.gz bytes.",
});

/** Whether a string is a bundle digest (`sha256:<64 lower-case hex>`). */
export function isBundleDigest(value: unknown): boolean {
  return typeof value === 'string' && new RegExp(BUNDLE_DIGEST_PATTERN).test(value);
}

/**
 * The packages the service provides to a team's Playwright code (its @playwright/test stand-in and
 * the runner): a bundle may not carry its own, which Node would find first.
 */
export const PROVIDED_PACKAGES: ReadonlySet<string> = new Set(['@playwright/test', 'playwright', 'playwright-core']);

/** The manifest's name at the bundle's root. */
export const BUNDLE_MANIFEST = 'testrun-bundle.json';

/** `testrun-bundle.json`: what the bundle holds, written by the CLI. */
export const BundleManifest = Type.Object(
  {
    format: Type.Literal(1),
    config: Type.String({ minLength: 1, description: "The Playwright config, relative to the bundle's root." }),
    playwrightVersion: Type.Union([Type.String(), Type.Null()], {
      description: "The team's installed @playwright/test version (null when it was not found).",
    }),
    files: Type.Integer({ minimum: 0, description: 'How many files the bundle holds besides the manifest.' }),
  },
  { additionalProperties: true },
);
export type BundleManifest = Static<typeof BundleManifest>;

/** The answer of PUT …/bundles/{digest}. */
export const BundleStored = Type.Object(
  {
    digest: BundleDigest,
    size: Type.Integer({ minimum: 0, description: "The bundle's size in bytes." }),
  },
  { additionalProperties: false },
);
export type BundleStored = Static<typeof BundleStored>;
