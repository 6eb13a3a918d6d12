import type { ProblemFieldError } from '@testrun/contracts';

/**
 * A refused admin action; `errors` lists every problem of a project file with its path. A module of
 * its own because every operator action throws it: workspaces and projects (admin.ts), webhooks,
 * secrets.
 */
export class AdminError extends Error {
  override name = 'AdminError';
  constructor(
    message: string,
    readonly errors: ProblemFieldError[] = [],
  ) {
    super(message);
  }
}
