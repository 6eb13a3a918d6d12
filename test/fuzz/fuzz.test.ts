// The CI slice of `pnpm fuzz`: 1,000 generated requests with a fixed seed against a real API on a
// real port, on this run's Postgres and Redis. Every answer is a 2xx or a 4xx problem document,
// no 4xx creates a run or a job, and the server closes every connection the fuzzer closed.
import { runFuzz } from './fuzz';

it('1,000 fuzzed requests: no 5xx, every 4xx a problem, no 4xx changes state, no connection left open', async () => {
  const report = await runFuzz({ seed: 20_261_122, cases: 1_000, env: process.env });
  expect(report.failures).toEqual([]);
  expect(report.cases).toBe(1_000);
  expect(report.serverErrors).toBe(0);
  expect(report.stateChanges).toBe(0);
  expect(report.connectionsLeftOpen).toBe(0);
}, 300_000);
