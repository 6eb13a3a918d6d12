import { checkDefinition, MAX_RUN_ATTEMPTS, stepProblemOutcome, workerLostOutcome } from './run-outcomes';

describe('checkDefinition', () => {
  it('returns the valid steps', () => {
    expect(checkDefinition([{ action: 'goto', url: '/' }])).toEqual({ steps: [{ action: 'goto', url: '/' }] });
  });

  it('names the first invalid step', () => {
    expect(checkDefinition([])).toEqual({ problem: 'the test has no steps' });
    expect(checkDefinition([{ action: 'goto', url: '/' }, { action: 'click' }])).toEqual({
      problem: 'step 2 (selector): is required',
    });
    expect(checkDefinition([{ action: 'fly' }])).toEqual({
      problem: expect.stringMatching(/^step 1 \(action\): must be one of/) as unknown,
    });
  });
});

describe('stepProblemOutcome', () => {
  const timing = { durationMs: 5, startedAt: new Date(0), target: '#go' };
  const click = { action: 'click', selector: '#go' } as const;

  it('is null for a passed step', () => {
    expect(stepProblemOutcome(1, click, { outcome: 'passed', ...timing })).toBeNull();
  });

  it('keeps a failure code with a failed status and an error code with an error status', () => {
    const failed = { outcome: 'failed', code: 'element_not_found', message: 'm', reason: 'r' } as const;
    const errored = { outcome: 'error', code: 'timeout', message: 'm', reason: 'r' } as const;
    expect(stepProblemOutcome(2, click, { ...failed, ...timing })).toMatchObject({
      status: 'failed',
      code: 'element_not_found',
      step: 2,
      resultSummary: 'Failed at step 2 (click "#go"): r',
    });
    expect(stepProblemOutcome(3, click, { ...errored, ...timing })).toMatchObject({
      status: 'error',
      code: 'timeout',
      step: 3,
      resultSummary: 'Error at step 3 (click "#go"): r',
    });
  });
});

describe('workerLostOutcome', () => {
  it('says how often the worker was lost', () => {
    expect(workerLostOutcome(MAX_RUN_ATTEMPTS)).toMatchObject({
      code: 'worker_lost',
      message: expect.stringContaining(`attempt ${MAX_RUN_ATTEMPTS} of ${MAX_RUN_ATTEMPTS}`) as unknown,
    });
    expect(workerLostOutcome(1).resultSummary).toContain('lost once');
  });
});
