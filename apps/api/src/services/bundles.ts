import type { Readable } from 'node:stream';
import {
  BUNDLE_CAPS_BY_PLAN,
  isBundleDigest,
  needsBundle,
  type BundleCaps,
  type ParsedDeploymentRequest,
  type Plan,
} from '@testrun/contracts';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { BundleError, bundleExists, storeBundle } from '@testrun/core/bundles';
import { ApiError } from '../errors';
import { bundleTooLarge } from '../middleware/json-body';

/** A path's digest, or 404: a digest not of the form `sha256:<64 hex>` names no bundle. */
function digestOf(digest: string): string {
  if (!isBundleDigest(digest)) throw new ApiError('not_found', `"${digest}" is not a bundle digest (sha256:<64 hex>).`);
  return digest;
}

/** The unpacked caps of the workspace's plan (BUNDLE_CAPS_BY_PLAN), unless `caps` overrides them (tests). */
async function capsOf(
  db: Db,
  workspaceId: string,
  caps: BundleCaps | undefined,
): Promise<BundleCaps & { plan?: Plan }> {
  if (caps) return caps;
  const rows = await db.$queryRaw<
    { plan: Plan }[]
  >`SELECT plan::text AS plan FROM workspaces WHERE id = ${workspaceId}`;
  const plan = rows[0]?.plan ?? 'free';
  return { ...BUNDLE_CAPS_BY_PLAN[plan], plan };
}

/** PUT …/bundles/{digest}: 201 stored, 200 when the workspace had it; 413 / 422 `invalid_bundle` refused. */
export async function putBundle(
  store: ArtifactStore,
  db: Db,
  input: { workspaceId: string; digest: string; body: Readable; maxBytes: number; caps?: BundleCaps },
) {
  const digest = digestOf(input.digest);
  const caps = await capsOf(db, input.workspaceId, input.caps);
  try {
    const { created, size } = await storeBundle(store, { ...input, digest, caps });
    return { body: { digest, size }, status: created ? 201 : 200 };
  } catch (e) {
    if (!(e instanceof BundleError)) throw e;
    throw bundleRefusal(e, input.maxBytes, caps.plan);
  }
}

/**
 * A bundle's refusal as the API's problem: 413 over its packed or unpacked size, 422 `invalid_bundle`
 * otherwise; a cap's refusal names it and the value it was held to, as `(limit NAME = VALUE)`.
 */
function bundleRefusal(e: BundleError, maxBytes: number, plan: Plan | undefined): ApiError {
  if (e.reason === 'too_large') return bundleTooLarge(maxBytes);
  const limit = e.cap ? ` (limit ${e.cap.name} = ${e.cap.value}${plan ? ` on the ${plan} plan` : ''})` : '';
  const detail = `The bundle is refused: ${e.message}${limit}.`;
  return new ApiError(e.reason === 'unpacked_too_large' ? 'payload_too_large' : 'invalid_bundle', detail);
}

/** HEAD …/bundles/{digest}: 200 when the workspace has it, 404 otherwise. */
export async function headBundle(store: ArtifactStore, workspaceId: string, digest: string) {
  if (!(await bundleExists(store, workspaceId, digestOf(digest))))
    throw new ApiError('not_found', `This workspace has no bundle ${digest}.`);
  return { body: null };
}

/**
 * The deployment's check of its `bundle`: a file with a `playwright:` section needs one this
 * workspace has stored (a dry run: one named) (422 `invalid_project` naming /bundle otherwise).
 */
export async function checkDeploymentBundle(
  store: ArtifactStore,
  workspaceId: string,
  request: ParsedDeploymentRequest,
): Promise<void> {
  if (!needsBundle(request.project)) return;
  const refuse = (message: string) =>
    new ApiError('invalid_project', `The deployment is invalid: /bundle ${message}.`, {
      errors: [{ path: '/bundle', message }],
    });
  if (request.bundle === undefined)
    throw refuse('is required: the project file has a playwright section (testrun deploy packs and uploads it)');
  // A dry run uploads nothing first (`testrun deploy --dry-run` packs and says what it would send).
  if (!request.dryRun && !(await bundleExists(store, workspaceId, request.bundle)))
    throw refuse(`names a bundle this workspace does not have (upload it with PUT …/bundles/${request.bundle})`);
}
