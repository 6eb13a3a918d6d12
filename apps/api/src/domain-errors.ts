import { underProject } from '@testrun/contracts';
import { DeploymentError, NotFoundError } from '@testrun/core/projects';
import { DiscoveryUnavailableError } from '@testrun/core/queue';
import { ApiError } from './errors';

/**
 * Core's refusals as the API's problems, in one place: the route builder passes every error a
 * handler throws through here, so a service calls core and lets its refusal go. Anything else
 * (an ApiError, a fault) is returned as it is.
 */
export function apiErrorOf(e: unknown): unknown {
  if (e instanceof NotFoundError) return new ApiError('not_found', e.message);
  if (e instanceof DiscoveryUnavailableError)
    return new ApiError(
      'discovery_unavailable',
      e.failed
        ? 'A worker failed to list the bundle’s Playwright tests (its log says why); nothing was stored. Retry later.'
        : 'No worker listed the bundle’s Playwright tests in time; nothing was stored. Retry later.',
    );
  if (e instanceof DeploymentError) return deploymentProblem(e);
  return e;
}

function deploymentProblem(e: DeploymentError): ApiError {
  switch (e.refusal) {
    case 'not_found':
      return new ApiError('not_found', e.message);
    case 'precondition_failed':
      return new ApiError('precondition_failed', e.message);
    case 'over_limit':
      return new ApiError('limit_exceeded', `${e.message}.`);
    case 'invalid': {
      const errors = underProject(e.errors.length > 0 ? e.errors : [{ path: '', message: e.message }]);
      const listed = errors.map((x) => `${x.path} ${x.message}`).join('; ');
      return e.overLimit
        ? new ApiError('limit_exceeded', `The project file is over a limit: ${listed}.`, { errors })
        : new ApiError('invalid_project', `The project file is invalid: ${listed}.`, { errors });
    }
  }
}
