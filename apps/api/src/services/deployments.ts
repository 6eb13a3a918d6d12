import {
  type DiscoveryResult,
  type ParsedDeploymentRequest,
  type ProblemFieldError,
  type ProjectFile,
} from '@testrun/contracts';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import {
  activateDeployment,
  deployProject,
  dryRunDeployment,
  expandPlaywrightSuites,
  playwrightSection,
  readBundleTexts,
  withImportedBaselines,
  type Expanded,
} from '@testrun/core/projects';
import { bundleExists } from '@testrun/core/bundles';
import type { Discover } from '@testrun/core/queue';
import type { TargetPolicy } from '@testrun/core/target-policy';
import { ApiError } from '../errors';
import { checkDeploymentBundle } from './bundles';
import type { KeepResponse } from './idempotency';
import { workspacePolicy } from './target-check';

export type DeploymentContext = {
  db: Db;
  /** Lists a bundle's Playwright tests in a worker's sandbox; without it a Playwright deployment is a 503. */
  discover: Discover | undefined;
  /** The deployment's target network policy: a base URL or webhook URL it refuses makes the file invalid. */
  targetPolicy: TargetPolicy;
  /** Seals the secrets of webhook endpoints an activated file adds. */
  webhookKey: Buffer;
  /** Where the workspace's Playwright bundles are (a deployment's `bundle` must be there). */
  store: ArtifactStore;
};

export type DeploymentRequest = {
  workspaceId: string;
  keyId: string;
  projectSlug: string;
  request: ParsedDeploymentRequest;
  ifMatch: string | null;
};

/**
 * POST …/deployments: stores (and activates) a version, or answers a dry run. A refused file is a
 * 422 `invalid_project` (or `limit_exceeded` when every error is a value over a cap) naming each
 * error under /project; a stale If-Match is a 412; a project at its deployments per day is a 422
 * `limit_exceeded` (checked with the project row locked, after If-Match).
 */
export async function createDeployment(ctx: DeploymentContext, input: DeploymentRequest, keep?: KeepResponse) {
  const { workspaceId, projectSlug, request } = input;
  const check = (file: ProjectFile) => targetErrors(ctx, workspaceId, file);
  await checkDeploymentBundle(ctx.store, workspaceId, request);
  const { deployment } = await deployProject(ctx.db, {
    workspaceId,
    document: request.project,
    expand: (file) => discovered(ctx, workspaceId, request, file),
    activate: request.activate,
    keyId: input.keyId,
    slug: projectSlug,
    ifMatch: input.ifMatch,
    webhookKey: ctx.webhookKey,
    check,
    inTransaction: keep,
  });
  return { body: deployment };
}

/** A dry run: the changes and ids, nothing stored (so nothing for an Idempotency-Key to keep). */
export async function dryRun(ctx: DeploymentContext, input: Omit<DeploymentRequest, 'keyId' | 'ifMatch'>) {
  await checkDeploymentBundle(ctx.store, input.workspaceId, input.request);
  return dryRunDeployment(ctx.db, {
    workspaceId: input.workspaceId,
    document: input.request.project,
    slug: input.projectSlug,
    check: (file) => targetErrors(ctx, input.workspaceId, file),
    expand: (file) => discovered(ctx, input.workspaceId, input.request, file),
  });
}

/** POST …/deployments/{deploymentId}/activate. */
export async function activate(
  ctx: DeploymentContext,
  input: { workspaceId: string; projectSlug: string; deploymentId: string; ifMatch: string | null },
) {
  return (await activateDeployment(ctx.db, { ...input, webhookKey: ctx.webhookKey })).deployment;
}

/**
 * The file's Playwright suites filled with the tests a worker discovers in the request's bundle
 * (in its sandbox: tenant code never runs in the API), or the errors that keep it from deploying.
 */
async function discovered(
  ctx: DeploymentContext,
  workspaceId: string,
  request: ParsedDeploymentRequest,
  file: ProjectFile,
): Promise<Expanded> {
  const section = playwrightSection(file);
  const { bundle } = request;
  if (!section) return { file, bundle: null, warnings: [] };
  if (bundle === undefined)
    return {
      errors: [{ path: '/playwright', message: 'needs the request’s `bundle` (testrun deploy packs and uploads it)' }],
    };
  // A dry run may name a bundle it did not upload: its Playwright suites are then listed without tests.
  if (request.dryRun && !(await bundleExists(ctx.store, workspaceId, bundle))) return { file, bundle, warnings: [] };
  if (!ctx.discover)
    throw new ApiError('discovery_unavailable', 'This service has no worker to discover Playwright tests with.');
  // A worker that failed or did not answer is core's DiscoveryUnavailableError (a 503, domain-errors.ts).
  const result: DiscoveryResult = await ctx.discover({ workspaceId, bundle, config: section.config });
  if ('error' in result && result.cause === 'bundle')
    throw new ApiError('invalid_bundle', `The bundle is refused by the worker: ${result.error}.`, {
      errors: [{ path: '/bundle', message: result.error }],
    });
  if ('error' in result && result.cause === 'worker')
    throw new ApiError(
      'discovery_unavailable',
      `A worker could not list the bundle’s Playwright tests: ${result.error}; nothing was stored. Retry later.`,
    );
  const texts = 'error' in result ? new Map<string, string>() : await specTexts(ctx, workspaceId, bundle, result);
  const expanded = expandPlaywrightSuites(file, bundle, result, texts);
  // A dry run stores nothing: its committed baselines are neither read nor stored.
  if ('errors' in expanded || 'error' in result || request.dryRun) return expanded;
  return withImportedBaselines(ctx, workspaceId, expanded, result.tests);
}

/** The discovered tests' spec files as the bundle holds them (each test's source digest is read from them). */
function specTexts(
  ctx: DeploymentContext,
  workspaceId: string,
  bundle: string,
  result: Extract<DiscoveryResult, { tests: unknown }>,
): Promise<Map<string, string>> {
  return readBundleTexts(ctx.store, workspaceId, bundle, new Set(result.tests.map((t) => t.file)));
}

/** The file's base URL and webhook URLs the network policy refuses, as errors of the file. */
async function targetErrors(
  ctx: DeploymentContext,
  workspaceId: string,
  file: ProjectFile,
): Promise<ProblemFieldError[]> {
  const policy = await workspacePolicy(ctx.db, ctx.targetPolicy, workspaceId);
  const urls: Array<[string, string]> = [
    ['/baseUrl', file.baseUrl],
    ...(file.webhooks ?? []).map((w, i): [string, string] => [`/webhooks/${i}/url`, w.url]),
  ];
  return urls.flatMap(([path, url]) => {
    const decision = policy.checkUrl(url);
    return decision.allowed ? [] : [{ path, message: `is not allowed by the network policy: ${decision.detail}` }];
  });
}
