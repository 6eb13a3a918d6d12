import * as core from '@actions/core';
import type { TestrunClient } from '@testrun/client';
import {
  deploySource,
  formatProjectFileError,
  isProjectFileRefusal,
  locateErrors,
  readProjectSource,
  UsageError,
  type ProjectFileError,
} from '@testrun/cli/ci';
import type { ActionInputs } from './inputs';

/** Each fault as an error annotation on its line of the file, and in the log as `file:line:column: message`. */
function annotate(file: string, errors: readonly ProjectFileError[]): void {
  for (const e of errors)
    core.error(formatProjectFileError(file, e), {
      title: 'Testrun project file',
      file,
      startLine: e.line,
      startColumn: e.column,
    });
}

/**
 * With the input `file`: deploys the project file, as a preview (not active) or, with `deploy: true`,
 * as the active version, and completes the request to run that deployment (its project and
 * `deploymentId`). Each of the deployment's warnings is a warning annotation on the file. A fault
 * of the file is annotated at its line and ends the step (an input refused for a YAML error, the
 * API's 422 otherwise). Without `file`, nothing.
 */
export async function deployFile(client: TestrunClient, inputs: ActionInputs): Promise<void> {
  const { file, target, request } = inputs;
  if (file === null || target.kind === 'test') return;
  const read = readProjectSource(file);
  if (!read.ok) {
    annotate(file, read.errors);
    throw new UsageError(`${file} is not a valid project file`);
  }
  const { source } = read;
  try {
    const deployment = await deploySource(client, source, { activate: inputs.deploy, dryRun: false });
    if ('dry_run' in deployment) throw new Error('the API answered a dry run to a deployment');
    const what = deployment.active ? 'Deployed and activated' : 'Deployed a preview of';
    core.info(`${what} ${deployment.project_slug}: version ${deployment.version} (${deployment.id})`);
    // What discovery noticed and the service does not apply: on the pull request, not only in the log.
    for (const warning of deployment.warnings)
      core.warning(warning, { title: `Testrun version ${deployment.version} of ${deployment.project_slug}`, file });
    core.setOutput('deployment-id', deployment.id);
    core.setOutput('version', String(deployment.version));
    target.project = deployment.project_slug;
    request.projectSlug = deployment.project_slug;
    request.deploymentId = deployment.id;
  } catch (e) {
    if (isProjectFileRefusal(e)) annotate(file, locateErrors(source, e.errors));
    throw e;
  }
}
