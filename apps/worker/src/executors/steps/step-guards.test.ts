import type { StepOutcomeResult } from '../../run/step-outcome';
import { applyViolation, withBlockedRequest } from './step-guards';

const timing = { durationMs: 12, startedAt: new Date(0), target: '/r' };
const blocked = { host: '127.0.0.2', detail: '127.0.0.2 is a loopback address (rule: loopback)' };

describe('step guards', () => {
  it('turns any step result into error/target_blocked once a request was blocked, naming host and rule', () => {
    const results: StepOutcomeResult[] = [
      { outcome: 'passed', ...timing },
      { outcome: 'failed', code: 'http_error', message: 'GET /r answered HTTP 403', reason: 'x', ...timing },
    ];
    for (const result of results) {
      expect(withBlockedRequest(result, [blocked])).toEqual({
        outcome: 'error',
        code: 'target_blocked',
        message: `a request to 127.0.0.2 was blocked by the target network policy: ${blocked.detail}`,
        reason: `target blocked (${blocked.detail})`,
        ...timing,
      });
    }
  });

  it('leaves a step result alone while nothing was blocked', () => {
    const passed: StepOutcomeResult = { outcome: 'passed', ...timing };
    expect(withBlockedRequest(passed, [])).toBe(passed);
    expect(withBlockedRequest(passed, undefined)).toBe(passed);
  });

  it('turns a step during which the page went past a limit into error/resource_limit', () => {
    const failed: StepOutcomeResult = { outcome: 'failed', code: 'http_error', message: 'm', reason: 'r', ...timing };
    expect(applyViolation(failed, { kind: 'pages', detail: 'opened more than 20 pages' })).toEqual({
      outcome: 'error',
      code: 'resource_limit',
      message: 'the page opened more than 20 pages; the run was stopped',
      reason: 'resource limit reached (the page opened more than 20 pages)',
      ...timing,
    });
    expect(applyViolation(failed, null)).toBe(failed);
  });
});
