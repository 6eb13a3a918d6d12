import { isTerminalRunStatus, type Run, type SuiteRun } from '@testrun/contracts';
import type { WaitOptions } from './options';
import { poll, type PollRead, type PollReadOptions } from './poll';
import { readRun, readSuiteRun } from './run-reads';
import type { Cached, Transport } from './transport';

// Waiting for runs and suite runs to end: the client's `waitFor…` methods, each a read given to the
// poll loop and the test of a final state.

/**
 * Polls a run until it is terminal. Each poll after the first sends the last answer's `ETag` as
 * `If-None-Match`, so an unchanged run costs the server no body (304).
 */
export async function waitForRun(transport: Transport, runId: string, options: WaitOptions<Run>): Promise<Run> {
  let cached: Cached<Run> | undefined;
  return poll(
    transport.options,
    `Run ${runId}`,
    options,
    async (o) => {
      const r = await readRun(transport, runId, o, cached);
      cached = r.etag ? { etag: r.etag, body: r.run } : undefined;
      return { state: r.run, waited: r.waited };
    },
    (run) => isTerminalRunStatus(run.status),
  );
}

/** Polls a suite run until it is terminal (every child terminal), conditionally as {@link waitForRun} does. */
export async function waitForSuiteRun(
  transport: Transport,
  suiteRunId: string,
  options: WaitOptions<SuiteRun>,
): Promise<SuiteRun> {
  let cached: Cached<SuiteRun> | undefined;
  return poll(
    transport.options,
    `Suite run ${suiteRunId}`,
    options,
    async (o) => {
      const r = await readSuiteRun(transport, suiteRunId, o, cached);
      cached = r.etag ? { etag: r.etag, body: r.state } : undefined;
      return r;
    },
    (s) => isTerminalRunStatus(s.status),
  );
}

/**
 * Polls a set of runs until every one is terminal. Each round reads only the runs not yet
 * terminal, so the request count shrinks as runs finish. Results keep the order of `runIds`.
 */
export async function waitForRuns(
  transport: Transport,
  runIds: readonly string[],
  options: WaitOptions<Run[]>,
): Promise<Run[]> {
  const known = new Map<string, Run>();
  // Plain polls: a long poll of each run in turn would hold the round on the first one.
  const read = async ({ deadline, signal }: PollReadOptions): Promise<PollRead<Run[]>> => {
    const runs: Run[] = [];
    for (const id of runIds) {
      let run = known.get(id);
      if (!run || !isTerminalRunStatus(run.status)) {
        run = (await readRun(transport, id, { deadline, signal })).run;
        known.set(id, run);
      }
      runs.push(run);
    }
    return { state: runs, waited: false };
  };
  return poll(transport.options, `${runIds.length} runs`, options, read, (runs) =>
    runs.every((r) => isTerminalRunStatus(r.status)),
  );
}
