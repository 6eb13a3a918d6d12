import type { TestrunClient } from '@testrun/client';
import type { Run, RunReport, VisualChange } from '@testrun/contracts';
import { buildJunitXml } from './junit';
import { addDetails, bareTest, closingLines, summarize, testsFromRuns } from './report';
import { changedScreenshots, newBaselinesHint } from './visual-notes';

// What `testrun run` says of visual changes: a failed run's changed screenshots on its closing
// line with the command that approves them, the same in its JUnit body, and one line for the
// tests that passed with new baselines awaiting approval.

const change = (id: string, name: string, kind: VisualChange['kind'], approved = false): VisualChange => ({
  id,
  name,
  path: `e2e/tests/visual.spec.ts-snapshots/${name}`,
  kind,
  approved,
  approved_at: approved ? '2026-12-07T10:00:00.000Z' : null,
  approved_by: approved ? 'ci' : null,
});

const run = (id: string, status: Run['status'], summary: string, visual?: VisualChange[]): Run => ({
  id,
  status,
  result_summary: summary,
  error: null,
  skip_reason: null,
  test_id: `tst_${id}`,
  test_name: `test ${id}`,
  deployment_id: 'dep_1',
  suite_run_id: null,
  created_at: '2026-12-07T10:00:00.000Z',
  started_at: '2026-12-07T10:00:00.020Z',
  finished_at: '2026-12-07T10:00:01.020Z',
  duration_ms: 1_000,
  attempts: 1,
  retries: 0,
  flaky: false,
  previous_attempts: [],
  blocked_request_count: 0,
  ...(visual ? { visual_changes: visual } : {}),
});

const changedSummary =
  'Failed at step 1 (Expect "toHaveScreenshot"): Error: expect(page).toHaveScreenshot(expected) failed';

describe('a run that failed on a changed screenshot', () => {
  const tests = testsFromRuns([
    run('run_1', 'failed', changedSummary, [
      change('vis_1', 'home.png', 'changed'),
      change('vis_2', 'heading.png', 'changed', true),
    ]),
    run('run_2', 'failed', 'Failed at step 1: expected 3'),
  ]);

  it('says so on its closing line, with the command that approves it', () => {
    expect(closingLines(tests)).toEqual([
      [
        'FAILED test run_1: Screenshot changed: home.png',
        `        ${changedSummary}`,
        '        If the change is intended, make it the baseline: testrun approve --run run_1',
      ].join('\n'),
      'FAILED test run_2: Failed at step 1: expected 3',
    ]);
    expect(tests.map((t) => changedScreenshots(t)?.note ?? null)).toEqual(['Screenshot changed: home.png', null]);
  });

  it('says so in its JUnit failure', () => {
    const report: RunReport = {
      kind: 'project',
      project: 'shop',
      suite: null,
      testId: null,
      suiteRunId: null,
      runIds: ['run_1', 'run_2'],
      suiteRunUrl: null,
      idempotencyKey: 'k',
      replayed: false,
      ...summarize(tests),
      tests,
      timedOut: false,
      durationMs: 2_000,
      exitCode: 1,
      message: 'The project failed',
    };
    const xml = buildJunitXml(report, new Date('2026-12-07T10:00:00Z'));
    expect(xml).toContain(
      'Screenshot changed: home.png. If the change is intended, make it the baseline: testrun approve --run run_1\nRun: run_1',
    );
    expect(xml.match(/testrun approve/g)).toHaveLength(1);
  });

  it("is known in suite mode from the run read for the failure's details", async () => {
    const client = {
      getRunWithLink: (runId: string) =>
        Promise.resolve({
          run: run(runId, 'failed', changedSummary, [change('vis_1', 'home.png', 'changed')]),
          viewUrl: `http://t/view/runs/${runId}/tok`,
        }),
    } as unknown as TestrunClient;
    const tests = [bareTest('run_3', 'home looks right', 'failed', 1_000)];
    await addDetails(client, tests);
    expect(closingLines(tests)[0]).toContain('Screenshot changed: home.png');
    expect(closingLines(tests)[0]).toContain('testrun approve --run run_3\n        http://t/view/runs/run_3/tok');
  });
});

describe('newBaselinesHint', () => {
  const fresh = (id: string) =>
    run(id, 'passed', 'Passed; new baseline awaiting approval: home.png', [change(`vis_${id}`, 'home.png', 'new')]);

  it('names the tests that passed with new baselines and the command that approves them', () => {
    const tests = testsFromRuns([fresh('run_1'), run('run_2', 'passed', 'Passed')]);
    expect(newBaselinesHint(tests, null)).toBe(
      '1 test passed with new baselines awaiting approval (home.png); approve them: testrun approve --run run_1',
    );
    expect(newBaselinesHint(tests, 'srun_1')).toBe(
      '1 test passed with new baselines awaiting approval (home.png); approve them: testrun approve --suite-run srun_1',
    );
    const two = testsFromRuns([fresh('run_1'), fresh('run_2')]);
    expect(newBaselinesHint(two, null)).toBe(
      '2 tests passed with new baselines awaiting approval (home.png, home.png); approve them: testrun approve --run <id>, for run_1, run_2',
    );
  });

  it("names each run's command when the suite run's would approve a failed run's change too", () => {
    const tests = testsFromRuns([
      fresh('run_1'),
      run('run_2', 'failed', changedSummary, [change('vis_9', 'cart.png', 'changed')]),
    ]);
    expect(newBaselinesHint(tests, 'srun_1')).toMatch(/approve them: testrun approve --run run_1$/);
  });

  it('says nothing when no test passed with a baseline awaiting approval', () => {
    const approved = run('run_1', 'passed', 'Passed', [change('vis_1', 'home.png', 'new', true)]);
    expect(newBaselinesHint(testsFromRuns([approved, run('run_2', 'passed', 'Passed')]), 'srun_1')).toBeNull();
  });
});
