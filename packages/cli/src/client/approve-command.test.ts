import type { VisualApproval, VisualChange } from '@testrun/contracts';
import { approvalLinkText, approvalRequest, approvalText, checkLinkFlags } from './approve-command';
import { UsageError } from './parse-options';

const change = (id: string, name: string, kind: VisualChange['kind']): VisualChange => ({
  id,
  name,
  path: `tests/home.spec.ts-snapshots/${name}`,
  kind,
  approved: true,
  approved_at: '2026-12-07T10:00:00.000Z',
  approved_by: 'ci',
});

describe('approvalRequest', () => {
  it('takes a run or a suite run, and every change not yet approved unless --change names some', () => {
    expect(approvalRequest({ run: 'run_1', change: [] })).toEqual({ target: { runId: 'run_1' } });
    expect(approvalRequest({ suiteRun: 'srun_1', change: ['vis_a', 'vis_b', 'vis_a'] })).toEqual({
      target: { suiteRunId: 'srun_1' },
      ids: ['vis_a', 'vis_b'],
    });
  });

  it('refuses both or neither of --run and --suite-run, ids of another kind, and other change ids', () => {
    const refused = (flags: Parameters<typeof approvalRequest>[0], message: string) => {
      expect(() => approvalRequest(flags)).toThrow(UsageError);
      expect(() => approvalRequest(flags)).toThrow(message);
    };
    refused({ change: [] }, 'give exactly one of --run or --suite-run');
    refused({ run: 'run_1', suiteRun: 'srun_1', change: [] }, 'give exactly one of --run or --suite-run');
    refused({ run: 'srun_1', change: [] }, '--run must be a run id (run_…), got "srun_1"');
    refused({ suiteRun: 'run_1', change: [] }, '--suite-run must be a suite run id (srun_…), got "run_1"');
    refused(
      { run: 'run_1', change: ['vis_1', 'home.png'] },
      '--change must be a visual change id (vis_…), got "home.png"',
    );
  });
});

describe('approvalText', () => {
  const approval: VisualApproval = {
    approved: [change('vis_1', 'home.png', 'changed'), change('vis_2', 'heading.png', 'new')],
    deployments: ['dep_1'],
  };

  it('prints one line per change approved and a count', () => {
    expect(approvalText({ target: { runId: 'run_1' } }, approval)).toBe(
      [
        'approved home.png (changed) → deployment dep_1',
        'approved heading.png (new) → deployment dep_1',
        'Approved 2 visual changes of run_1 as baselines of deployment dep_1.',
      ].join('\n'),
    );
  });

  it('says when nothing was left to approve', () => {
    const none = { approved: [], deployments: [] };
    expect(approvalText({ target: { suiteRunId: 'srun_1' } }, none)).toBe(
      'Nothing to approve: srun_1 has no visual change awaiting approval.',
    );
    expect(approvalText({ target: { runId: 'run_1' }, ids: ['vis_9'] }, none)).toBe(
      'Nothing to approve: none of the changes named is a change of run_1 awaiting approval.',
    );
  });

  it('names the changes asked for that were not approved', () => {
    const one = { approved: [change('vis_1', 'home.png', 'changed')], deployments: ['dep_1', 'dep_2'] };
    expect(approvalText({ target: { suiteRunId: 'srun_1' }, ids: ['vis_1', 'vis_9'] }, one)).toBe(
      [
        'approved home.png (changed) → deployments dep_1, dep_2',
        'Approved 1 visual change of srun_1 as baselines of deployments dep_1, dep_2.',
        'Not approved (already approved, or no change of srun_1): vis_9.',
      ].join('\n'),
    );
  });
});

describe('--link', () => {
  it('is refused with --change, and wherever CI is set: a CI log is read by others', () => {
    expect(() => checkLinkFlags({ link: true, change: [] }, {})).not.toThrow();
    expect(() => checkLinkFlags({ link: true, change: [] }, { CI: 'false' })).not.toThrow();
    expect(() => checkLinkFlags({ link: false, change: ['vis_1'] }, { CI: 'true' })).not.toThrow();
    expect(() => checkLinkFlags({ link: true, change: ['vis_1'] }, {})).toThrow(
      '--link and --change do not go together',
    );
    for (const CI of ['true', '1', 'yes'])
      expect(() => checkLinkFlags({ link: true, change: [] }, { CI })).toThrow(
        /CI is set, and a CI log is read by others/,
      );
  });

  it('prints where to approve, until when, and that the link is the key holder’s', () => {
    const text = approvalLinkText({
      approvalUrl: 'https://t.example/view/approve/runs/run_1/key_1/abc~x',
      expires_at: '2026-12-07T11:00:00.000Z',
      pending_count: 1,
    });
    expect(text.split('\n')).toEqual([
      'Open this link to look at the changes and approve them in the browser (1 change awaits approval).',
      'It approves as this API key until 2026-12-07T11:00:00.000Z: give it to no one.',
      'https://t.example/view/approve/runs/run_1/key_1/abc~x',
    ]);
  });
});
