import { historySection } from './history';
import type { ViewHistoryMark } from '../model';

const p = { base: '/view' };

function mark(n: number, status: ViewHistoryMark['status'], extra: Partial<ViewHistoryMark> = {}): ViewHistoryMark {
  const at = new Date(Date.UTC(2026, 10, 22, 10, n, 0));
  return {
    id: `run_${String(n).padStart(26, '0')}`,
    token: `tok${n}`,
    status,
    flaky: false,
    at,
    createdAt: at,
    current: false,
    ...extra,
  };
}

test('the rate counts first-time passes, flaky passes, failures and errors of the marks shown', () => {
  const marks = [
    mark(1, 'passed'),
    mark(2, 'passed', { flaky: true }),
    mark(3, 'failed'),
    mark(4, 'error'),
    mark(5, 'passed', { current: true }),
  ];
  const out = historySection(p, { id: 'run_x', history: marks }, 2).value;
  expect(out).toContain(
    '2 passed first time, 1 flaky, 1 failed, 1 error of the last 5: 40% passed without a retry (60% with retries)',
  );
  // Oldest first, each a link to its run's page with a name in words.
  expect([...out.matchAll(/data-history-run="([^"]+)"/g)].map((m) => m[1])).toEqual(marks.map((m) => m.id));
  expect(out).toContain(`href="/view/runs/${marks[0]?.id}/tok1"`);
  expect(out).toContain('passed (flaky: on a retry), 2026-11-22 10:02:00 UTC');
  expect(out).toContain('passed, 2026-11-22 10:05:00 UTC, this run');
  expect(out.match(/aria-current="true"/g)).toHaveLength(1);
});

test('a mark the page cannot link is no link; one run and no run read as such', () => {
  const out = historySection(p, { id: 'run_x', history: [mark(1, 'failed', { token: null })] }, 3).value;
  expect(out).not.toContain('<a');
  expect(out).toContain('not linked');
  expect(out).toContain('0 passed, 1 failed of 1 run: 0% passed');
  expect(historySection(p, { id: 'run_x', history: [] }, 3).value).toContain('No run of this test has finished yet.');
  expect(historySection(p, { id: 'run_x' }, 3).value).toBe('');
});

test('a test that passes only on retries does not read as healthy', () => {
  const marks = [1, 2, 3, 4, 5].map((n) => mark(n, 'passed', { flaky: true, current: n === 5 }));
  const out = historySection(p, { id: 'run_x', history: marks }, 2).value;
  expect(out).toContain('0 passed first time, 5 flaky of the last 5: 0% passed without a retry (100% with retries)');
  expect(out).not.toContain('100% passed');
  // Without a flaky pass the line stays short.
  const clean = historySection(p, { id: 'run_x', history: [mark(1, 'passed'), mark(2, 'failed')] }, 2).value;
  expect(clean).toContain('1 passed, 1 failed of the last 2: 50% passed');
});
