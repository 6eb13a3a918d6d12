import type { ProblemFieldError } from '@testrun/contracts';

/** Why a deployment or an activation was refused; the API and the admin CLI each say it their way. */
export type DeploymentRefusal =
  /** The project file is invalid (or over a cap, `overLimit`): `errors` lists every problem by JSON pointer. */
  | 'invalid'
  /** No such project or deployment in the workspace. */
  | 'not_found'
  /** `If-Match` named another version than the active one. */
  | 'precondition_failed'
  /** The project is over a cap that is not its file's (`DEPLOYMENT_LIMITS.maxDeploymentsPerDay`): the message names it. */
  | 'over_limit';

/** A refused deployment, activation or managed webhook endpoint; nothing was stored. */
export class DeploymentError extends Error {
  override name = 'DeploymentError';
  constructor(
    readonly refusal: DeploymentRefusal,
    message: string,
    readonly errors: ProblemFieldError[] = [],
    /** Every error is a value over one of the fixed caps. */
    readonly overLimit = false,
  ) {
    super(message);
  }
}

/** A project, suite, test or deployment a request named is not in its workspace: the message says which. */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
}
