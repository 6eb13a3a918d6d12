import { declareRoute, pathParams } from './route-declaration';

// A project's Playwright bundles (docs/API.md, "Bundles"): content-addressed, so the CLI asks with
// HEAD whether the workspace has one and uploads it only when it has not.

const path = '/api/v1/projects/{projectSlug}/bundles/{digest}';

export const BUNDLE_ROUTES = {
  putBundle: declareRoute({
    operationId: 'putBundle',
    method: 'put',
    path,
    summary: "Upload a Playwright bundle (the team's config, specs and what they import) by its digest",
    description:
      "The body is the bundle's .tar.gz bytes (`application/octet-stream`), at most 50 MiB (`BUNDLE_LIMITS.maxBytes`; 413 `payload_too_large` over it). `digest` is `sha256:` and the 64 hex digits of the SHA-256 of those bytes. 201 when stored, 200 when the workspace already had it (nothing is written again). Unpacked as it is received, it may hold at most 256 MiB (`BUNDLE_LIMITS.maxUnpackedBytes`; 413 `payload_too_large`, nothing past the cap inflated) and 10,000 files and folders (`BUNDLE_LIMITS.maxFiles`; 422 `invalid_bundle`), regular files and folders only (a link, a device, an absolute path or `..` is 422 `invalid_bundle`), and none of the service's own packages (`node_modules/@playwright/test`, `playwright`, `playwright-core` at any depth, or a package.json naming one: 422 `invalid_bundle`). A body whose digest differs, or that is not a gzip'd tar with `testrun-bundle.json` at its root, is 422 `invalid_bundle`. Bundles belong to the workspace (another workspace's read as missing); the project need not exist yet, so a project's first deployment can name its bundle. A path whose digest is not of that form is a 404. A deployment names the bundle in `bundle`.",
    auth: 'apiKey',
    scope: 'preview',
    params: pathParams('projectSlug', 'digest'),
    rawBody: { mediaType: 'application/octet-stream', maxBytes: 'BUNDLE_LIMITS.maxBytes' },
    idempotent: false,
    conditionalGet: false,
    success: {
      status: 200,
      description: 'The workspace already had this bundle',
      schema: ['BundleStored'],
      created: 'The bundle, stored',
    },
    problems: { '404': ['not_found'], '422': ['invalid_bundle'] },
    documented: true,
  }),
  headBundle: declareRoute({
    operationId: 'headBundle',
    method: 'head',
    path,
    summary: 'Whether the workspace has a Playwright bundle (200, no body) or not (404)',
    auth: 'apiKey',
    scope: 'preview',
    params: pathParams('projectSlug', 'digest'),
    idempotent: false,
    conditionalGet: false,
    success: { status: 200, description: 'The workspace has the bundle' },
    problems: { '404': ['not_found'] },
    documented: true,
  }),
};
