import { TestrunNetworkError, type TestrunClient } from '@testrun/client';
import type { ReportTest, Run, SuiteRun } from '@testrun/contracts';
import { addDetails, bareTest, testsFromSuiteRun } from './report';

// Which runs addDetails reads: those that did not pass or passed on a retry, and, when the output
// lists attachments (--junit, --json), those that attached files; a few at a time, a busy API
// tolerated. The client is a stand-in: only its getRunWithLink is called.

type Answer = { attachments?: Run['attachments'] } | 'busy';

function fakeClient(answers: Record<string, Answer>) {
  const read: string[] = [];
  let open = 0;
  let most = 0;
  const client = {
    getRunWithLink: async (runId: string) => {
      read.push(runId);
      open += 1;
      most = Math.max(most, open);
      await new Promise((resolve) => setTimeout(resolve, 5));
      open -= 1;
      const answer = answers[runId] ?? {};
      if (answer === 'busy') throw new TestrunNetworkError('socket hang up');
      const run = {
        result_summary: `summary of ${runId}`,
        error: null,
        flaky: false,
        attempts: 1,
        previous_attempts: [],
        ...answer,
      } as unknown as Run;
      return { run, viewUrl: `http://t/view/runs/${runId}/tok` };
    },
  } as unknown as TestrunClient;
  return { client, read, most: () => most };
}

const passed = (runId: string, attachmentCount?: number): ReportTest => ({
  ...bareTest(runId, runId, 'passed', 10),
  ...(attachmentCount ? { attachmentCount } : {}),
});

it("carries a suite run entry's attachmentCount into its report test", () => {
  const entry = {
    runId: 'run_a',
    name: 'a',
    status: 'passed',
    skipReason: null,
    durationMs: 5,
    flaky: false,
    attempts: 1,
  };
  const suiteRun = {
    tests: [
      { ...entry, attachmentCount: 2 },
      { ...entry, runId: 'run_b' },
    ],
  } as unknown as SuiteRun;
  const [a, b] = testsFromSuiteRun(suiteRun);
  expect(a?.attachmentCount).toBe(2);
  expect(b && 'attachmentCount' in b).toBe(false);
});

it('reads a passed test that attached files only when the output lists attachments', async () => {
  const attachments = [{ id: 'art_1', name: 'cart.json', content_type: 'application/json', size_bytes: 4 }];
  const tests = () => [
    passed('run_plain'),
    passed('run_files', 1),
    { ...passed('run_bad'), status: 'failed' as const },
  ];

  const text = fakeClient({ run_files: { attachments } });
  const withoutList = tests();
  await addDetails(text.client, withoutList);
  expect(text.read).toEqual(['run_bad']);
  expect(withoutList[1]?.attachments).toBeUndefined();

  const junit = fakeClient({ run_files: { attachments } });
  const withList = tests();
  await addDetails(junit.client, withList, { attachments: true });
  expect(junit.read.sort()).toEqual(['run_bad', 'run_files']);
  expect(withList[1]).toMatchObject({ attachments, viewUrl: 'http://t/view/runs/run_files/tok' });
  expect(withList[0]?.viewUrl).toBeNull();
});

it('reads at most four runs at a time and leaves out what a busy API did not answer', async () => {
  const tests = Array.from({ length: 12 }, (_, i) => passed(`run_${i}`, 1));
  const { client, read, most } = fakeClient({ run_3: 'busy' });
  await addDetails(client, tests, { attachments: true });
  expect(read).toHaveLength(12);
  expect(most()).toBe(4);
  expect(tests[3]?.viewUrl).toBeNull();
  expect(tests[4]?.viewUrl).toBe('http://t/view/runs/run_4/tok');
});
