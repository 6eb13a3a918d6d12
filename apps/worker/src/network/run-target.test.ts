import { createTargetPolicy, parseTargetRules } from '@testrun/core/target-policy';
import type { StepOutcomeResult } from '../executors/steps';
import { baseUrlBlockedOutcome, refusalOf, withBlockedRequest } from './run-target';

const timing = { durationMs: 12, startedAt: new Date(0), target: '/r' };
const blocked = { host: '127.0.0.2', detail: '127.0.0.2 is a loopback address (rule: loopback)' };

describe('run-target', () => {
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

  it('refuses a base URL the policy refuses, and only that', () => {
    const policy = createTargetPolicy({ allow: parseTargetRules('127.0.0.1/32') });
    expect(refusalOf(policy, 'http://127.0.0.1:8080/')).toBeUndefined();
    expect(refusalOf(undefined, 'http://169.254.169.254/')).toBeUndefined();
    const refused = refusalOf(policy, 'http://0xA9FEA9FE/');
    expect(refused?.detail).toBe('169.254.169.254 is a cloud metadata endpoint (rule: metadata)');
    if (!refused) throw new Error('expected a refusal');
    expect(baseUrlBlockedOutcome(refused)).toMatchObject({
      status: 'error',
      code: 'target_blocked',
      resultSummary:
        "Error: the run's target 169.254.169.254 is blocked by the target network policy (169.254.169.254 is a cloud metadata endpoint (rule: metadata)).",
    });
  });
});
