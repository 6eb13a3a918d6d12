import { createHash } from 'node:crypto';
import { IDEMPOTENCY_KEY_MAX_LENGTH, toIdempotencyKeyCharacters, type RunCreateRequest } from '@testrun/contracts';

/**
 * A default `Idempotency-Key` derived from the identity of the CI job that runs the command, so a
 * step retried within one attempt of a pipeline (a retry wrapper, a crashed runner picked up
 * again) gets the first enqueue's answer instead of enqueuing twice, while a new attempt (GitHub
 * "Re-run jobs", a GitLab job retry) enqueues afresh: the attempt / job id is part of the key.
 *
 * The request is part of the key through a hash of what it addresses, its base URL and its header
 * NAMES. Header values are left out on purpose: the key is stored by the service and may show in
 * its logs, and a hash of a short secret can be brute-forced.
 *
 * Returns null outside a recognised CI system; the client then sends a random key per command.
 */
export function deriveCiIdempotencyKey(env: NodeJS.ProcessEnv, request: RunCreateRequest): string | null {
  const job = ciIdentity(env);
  if (!job) return null;
  // Only characters the contract's rule allows, and never longer than it allows.
  const key = toIdempotencyKeyCharacters(`testrun:${job}:${hashRequest(request)}`);
  return key.length <= IDEMPOTENCY_KEY_MAX_LENGTH ? key : `testrun:${sha256(key).slice(0, 64)}`;
}

/** The parts of an identity joined with `:`; an unset part is left empty, so positions keep their meaning. */
function identity(...parts: Array<string | undefined>): string {
  return parts.map((p) => p ?? '').join(':');
}

function ciIdentity(env: NodeJS.ProcessEnv): string | null {
  const discriminator = env.TESTRUN_CI_DISCRIMINATOR;
  if (env.GITHUB_ACTIONS === 'true' && env.GITHUB_RUN_ID) {
    // GITHUB_ACTION is the step's id (or __run_N), which separates two testrun steps of one job;
    // TESTRUN_CI_DISCRIMINATOR lets a matrix pass its leg, since GITHUB_JOB is shared by all legs.
    const attempt = env.GITHUB_RUN_ATTEMPT ?? '1';
    return identity(
      'gh',
      env.GITHUB_REPOSITORY,
      env.GITHUB_RUN_ID,
      attempt,
      env.GITHUB_JOB,
      env.GITHUB_ACTION,
      discriminator,
    );
  }
  if (env.GITLAB_CI === 'true' && env.CI_JOB_ID) {
    // A retried GitLab job gets a new CI_JOB_ID: a new attempt, a new key.
    return identity('gl', env.CI_PROJECT_ID, env.CI_PIPELINE_ID, env.CI_JOB_ID, discriminator);
  }
  if (env.BUILDKITE === 'true' && env.BUILDKITE_JOB_ID) {
    const retry = env.BUILDKITE_RETRY_COUNT ?? '0';
    return identity('bk', env.BUILDKITE_BUILD_ID, env.BUILDKITE_JOB_ID, retry, discriminator);
  }
  if (env.CIRCLECI === 'true' && env.CIRCLE_WORKFLOW_JOB_ID) {
    return identity('cc', env.CIRCLE_WORKFLOW_JOB_ID, discriminator);
  }
  if (env.CI && env.TESTRUN_CI_RUN_ID) {
    // Any other CI: the pipeline can name its own attempt.
    return identity('ci', env.TESTRUN_CI_RUN_ID, discriminator);
  }
  return null;
}

function hashRequest(request: RunCreateRequest): string {
  const canonical = JSON.stringify([
    request.testId ?? null,
    request.projectSlug ?? null,
    request.suiteSlug ?? null,
    request.baseUrl ?? null,
    Object.keys(request.headers ?? {})
      .map((n) => n.toLowerCase())
      .sort(),
  ]);
  return sha256(canonical).slice(0, 16);
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
