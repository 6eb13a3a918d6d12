import { usePolicedRun } from './policed-run';

/*
 * The verdict is the test's own (docs/WORKER.md, "Playwright tests: outcomes"): real specs run by
 * the real runner in the real sandbox, whose only way out is the worker's real egress proxy with a
 * policy that opens the shop (127.0.0.1) and refuses 127.0.0.2 (a loopback address).
 */

jest.setTimeout(240_000);

const TITLES = [
  'a request is refused, then it passes',
  'a request is refused, then it throws its own error',
  'its page.goto is refused',
  'its page.goto of https is refused',
  'its page.goto reaches a port nothing listens on',
  'its request reaches a port nothing listens on',
] as const;
const run = usePolicedRun({ fixture: 'verdict', spec: 'e2e/verdict.spec.js', titles: TITLES });
const { resultOf } = run;

const LOOPBACK = '127.0.0.2 is a loopback address (rule: loopback)';

test('a test that passed is passed, the request the policy refused named in its summary and its result', () => {
  const result = resultOf('a request is refused, then it passes');
  expect(result).toMatchObject({ status: 'passed', code: null });
  expect(result?.summary).toMatch(
    /^Passed; the network policy refused a request while it ran \(the first: 127\.0\.0\.2:\d+, /,
  );
  expect(result?.summary).toContain(LOOPBACK);
  expect(result?.blocked.map(({ host, port }) => ({ host, port }))).toEqual([
    { host: '127.0.0.2', port: run.refused.port },
  ]);
  expect(result?.blocked[0]?.detail).toContain(LOOPBACK);
});

test('a test that threw its own error after a refused request is test_code_error with its own message', () => {
  const result = resultOf('a request is refused, then it throws its own error');
  expect(result).toMatchObject({ status: 'error', code: 'test_code_error' });
  expect(result?.summary).toMatch(/^Failed: Error: the basket total is wrong: 41 \(e2e\/verdict\.spec\.js:\d+\); /);
  expect(result?.summary).toContain(LOOPBACK);
  expect(result?.blocked).toHaveLength(1);
});

test('a test whose page.goto the policy refused is target_blocked, over plain HTTP (the refusal page) and HTTPS', () => {
  for (const title of ['its page.goto is refused', 'its page.goto of https is refused'] as const) {
    const result = resultOf(title);
    expect({ title, status: result?.status, code: result?.code }).toEqual({
      title,
      status: 'error',
      code: 'target_blocked',
    });
    expect(result?.summary).toContain(`Blocked by the network policy: 127.0.0.2:${run.refused.port} (${LOOPBACK}`);
  }
  // Nothing was ever sent to the refused address.
  expect(run.refused.connections()).toBe(0);
});

test("a page.goto or request to an allowed port where nothing listens fails, as under playwright test, never passes on the proxy's page", () => {
  // playwright test: page.goto throws net::ERR_CONNECTION_REFUSED, request.get connect ECONNREFUSED.
  expect(resultOf('its page.goto reaches a port nothing listens on')).toMatchObject({
    status: 'error',
    code: 'target_unreachable',
  });
  expect(resultOf('its page.goto reaches a port nothing listens on')?.summary).toMatch(/net::ERR_EMPTY_RESPONSE/);
  expect(resultOf('its request reaches a port nothing listens on')).toMatchObject({ status: 'error' });
});
