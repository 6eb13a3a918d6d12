// Deploying a project file, as `testrun deploy`, `testrun run --file` and the GitHub Action do it:
// reading the file, packing and uploading its Playwright bundle, creating the version, and
// reporting a refusal at the lines of the file.
import { TestrunApiError, type TestrunClient } from '@testrun/client';
import type { Deployment, DeploymentDryRun } from '@testrun/contracts';
import { BundleRefusal, bundleOf, describeBundle, ensureUploaded, type PackedBundle } from '../bundle';
import { isReportable, reportFailure } from './connection';
import { warningLines } from './deployment-text';
import type { Output } from './output';
import { formatProjectFileError, locateErrors, readProjectSource, type ProjectSource } from './project-source';
import { EXIT } from './report';

/** Reads a project file, or prints its errors as `file:line:column: message` lines (then exit 2). */
export function loadProjectFile(file: string, out: Output): ProjectSource | null {
  const read = readProjectSource(file);
  if (read.ok) return read.source;
  for (const e of read.errors) out.info(formatProjectFileError(file, e));
  out.info(`testrun: ${file} is not a valid project file; nothing was deployed`);
  return null;
}

/**
 * Reports a failed deployment: a 422 naming faults of the file by JSON pointer (`invalid_project`,
 * `limit_exceeded`) prints each at its line of the file, `file:line:column: message`; anything else
 * as every API failure. Exit 2.
 */
export function reportDeployFailure(e: unknown, source: ProjectSource, out: Output, json: boolean): number {
  if (e instanceof BundleRefusal) {
    for (const reason of e.reasons) out.info(`${source.file}: playwright: ${reason}`);
    out.info(`testrun: the Playwright bundle of ${source.file} cannot be packed; nothing was deployed`);
    return EXIT.error;
  }
  if (!isReportable(e)) throw e;
  if (isProjectFileRefusal(e)) {
    for (const located of locateErrors(source, e.errors)) out.info(formatProjectFileError(source.file, located));
    out.info(`testrun: ${source.file} is not a valid project file (${e.code}); nothing was deployed`);
    if (json)
      out.result(
        JSON.stringify(
          {
            status: 'error',
            exitCode: EXIT.error,
            error: { kind: 'api', status: e.status, code: e.code, errors: e.errors },
          },
          null,
          2,
        ),
      );
    return EXIT.error;
  }
  return reportFailure(e, out, json);
}

/** A 422 that names faults of the project file by JSON pointer (`invalid_project`, `limit_exceeded`). */
export function isProjectFileRefusal(e: unknown): e is TestrunApiError {
  return e instanceof TestrunApiError && e.status === 422 && e.errors.some((f) => f.path.startsWith('/project'));
}

/**
 * Deploys `source` (active, preview or dry run). A file with a `playwright:` section is packed into
 * its bundle first, which is uploaded unless the workspace has it (a dry run packs, says what, and
 * uploads nothing); a bundle that cannot be packed is a {@link BundleRefusal}.
 */
export async function deploySource(
  client: TestrunClient,
  source: ProjectSource,
  options: { activate: boolean; dryRun: boolean; idempotencyKey?: string; out?: Output },
): Promise<Deployment | DeploymentDryRun> {
  const bundle = await bundleOf(source.file, source.project);
  for (const warning of bundle?.warnings ?? []) options.out?.info(`${source.file}: playwright: warning: ${warning}`);
  if (bundle) {
    // A dry run uploads it too (a bundle is the workspace's, by digest, and stores no version), so
    // the service lists its tests: the dry run shows what the version would hold.
    const sent = await uploadForDeploy(client, source.slug, bundle, options.dryRun);
    options.out?.info(`Bundle: ${describeBundle(bundle)}; ${sent}.`);
  }
  const request = {
    project: source.project,
    activate: options.activate,
    ...(options.dryRun ? { dryRun: true } : {}),
    ...(bundle ? { bundle: bundle.digest } : {}),
  };
  const idempotency = options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey };
  const deployment = (await client.createDeployment(source.slug, request, idempotency)).body;
  if (options.out && !('dry_run' in deployment)) for (const line of warningLines(deployment)) options.out.info(line);
  return deployment;
}

/**
 * Uploads the bundle unless the workspace has it; says what happened. A dry run with a key that may
 * not upload (no `preview` scope) goes on without: its Playwright suites are then listed without tests.
 */
async function uploadForDeploy(client: TestrunClient, slug: string, bundle: PackedBundle, dryRun: boolean) {
  try {
    return (await ensureUploaded(client, slug, bundle)) ? 'uploaded' : 'already uploaded';
  } catch (e) {
    if (!dryRun || !(e instanceof TestrunApiError) || e.status !== 403) throw e;
    return 'not uploaded (the key may not upload bundles: the dry run lists no Playwright test)';
  }
}
