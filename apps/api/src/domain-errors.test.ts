import { DeploymentError, NotFoundError } from '@testrun/core/projects';
import { DiscoveryUnavailableError } from '@testrun/core/queue';
import { apiErrorOf } from './domain-errors';
import { ApiError } from './errors';

function problemOf(e: unknown): { code: string; status: number; detail: string } {
  const mapped = apiErrorOf(e);
  if (!(mapped instanceof ApiError)) throw new Error('not mapped to a problem');
  return { code: mapped.code, status: mapped.status, detail: mapped.detail };
}

test("core's refusals become the API's problems", () => {
  expect(problemOf(new NotFoundError('No test "t_1" in this workspace.'))).toEqual({
    code: 'not_found',
    status: 404,
    detail: 'No test "t_1" in this workspace.',
  });
  expect(problemOf(new DeploymentError('precondition_failed', 'If-Match names version 2')).status).toBe(412);
  expect(problemOf(new DeploymentError('over_limit', 'At most 50 deployments a day')).detail).toBe(
    'At most 50 deployments a day.',
  );
  const invalid = problemOf(new DeploymentError('invalid', 'bad', [{ path: '/suites/0/slug', message: 'is empty' }]));
  expect(invalid).toEqual({
    code: 'invalid_project',
    status: 422,
    detail: 'The project file is invalid: /project/suites/0/slug is empty.',
  });
  expect(problemOf(new DiscoveryUnavailableError('the worker failed', true)).code).toBe('discovery_unavailable');
});

test('anything else is left as it is', () => {
  const fault = new Error('the database went away');
  expect(apiErrorOf(fault)).toBe(fault);
  const problem = new ApiError('invalid_body', 'no');
  expect(apiErrorOf(problem)).toBe(problem);
});
