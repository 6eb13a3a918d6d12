import { ArtifactStoreUnavailableError } from '@testrun/core/artifact-store';
import {
  checkDefinition,
  failedJobOutcome,
  MAX_RUN_ATTEMPTS,
  notRecordedError,
  stepProblemOutcome,
  workerLostOutcome,
} from './run-outcomes';

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

describe('failedJobOutcome', () => {
  it('is worker_lost only when BullMQ failed the job for stalling too often', () => {
    expect(failedJobOutcome('job stalled more than allowable limit', 2)).toEqual(workerLostOutcome(2));
  });

  it('says what kept a live worker from recording the run, as its job failed with it', () => {
    const refused = Object.assign(new Error('duplicate key'), { code: '23505' });
    const cases: Array<[unknown, string]> = [
      [new Error("Can't reach database server"), 'the database was unavailable'],
      [refused, 'the database refused one of its writes'],
      [new ArtifactStoreUnavailableError('write', new Error('down')), 'the artifact store was unavailable'],
    ];
    for (const [error, what] of cases) {
      const outcome = failedJobOutcome(notRecordedError(error).message, 1);
      expect(outcome).toMatchObject({
        code: 'internal_error',
        resultSummary: `Error: the run's outcome could not be recorded: ${what}.`,
      });
    }
    // A job failed by an older worker (no reason of ours) was a write that kept failing too.
    expect(failedJobOutcome(undefined, 1).code).toBe('internal_error');
  });
});
