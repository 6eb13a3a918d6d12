import { createTargetPolicy, parseTargetRules } from '@testrun/core/target-policy';
import { baseUrlBlockedOutcome, refusalOf } from './run-target';

describe('run-target', () => {
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
