/**
 * Where the service's start-up goes in a round, from the worker's log lines (its JSON lines at
 * `LOG_LEVEL=info`: `--worker-env LOG_LEVEL=info`): from the POST to the first run claimed (`run
 * started`), to the first batch gathered (`Playwright batch started`), and, for the batch whose test
 * began first, to its sandbox's start, its runner's tests listed and that first test begun (`Playwright
 * batch began its first test`, whose times count from the batch's preparation).
 */

/** Each in ms from the POST; absent when the worker's log did not say (it logged at `warn`). */
export interface StartupTimes {
  claimedMs: number;
  batchMs: number;
  sandboxMs?: number;
  listedMs?: number;
  firstTestMs: number;
}

interface LogLine {
  message?: string;
  timestamp?: string;
  sandboxMs?: number;
  listedMs?: number;
  firstTestMs?: number;
}

function parsed(line: string): (LogLine & { at: number }) | null {
  if (!line.startsWith('{')) return null;
  try {
    const value = JSON.parse(line) as LogLine;
    const at = value.timestamp === undefined ? NaN : Date.parse(value.timestamp);
    return Number.isNaN(at) ? null : { ...value, at };
  } catch {
    return null;
  }
}

/** The start-up of the round POSTed at `sent` (epoch ms), from the worker's output so far. */
export function startupOf(output: string, sent: number): StartupTimes | undefined {
  const lines = output
    .split('\n')
    .flatMap((line) => parsed(line) ?? [])
    .filter((l) => l.at >= sent);
  const first = (message: string) => lines.find((l) => l.message === message);
  const claimed = first('run started');
  const batch = first('Playwright batch started');
  // The output is in the order the worker wrote it: the first such line is the earliest.
  const began = lines.find((l) => l.message === 'Playwright batch began its first test' && l.firstTestMs !== undefined);
  if (!claimed || !batch || began?.firstTestMs === undefined) return undefined;
  const prepared = began.at - began.firstTestMs;
  const from = (ms: number | undefined) => (ms === undefined ? undefined : prepared + ms - sent);
  return {
    claimedMs: claimed.at - sent,
    batchMs: batch.at - sent,
    ...(began.sandboxMs !== undefined ? { sandboxMs: from(began.sandboxMs) } : {}),
    ...(began.listedMs !== undefined ? { listedMs: from(began.listedMs) } : {}),
    firstTestMs: began.at - sent,
  };
}

const secs = (ms: number | undefined) => (ms === undefined ? '–' : (ms / 1000).toFixed(2));

/** The rounds' start-ups as a markdown table (none: no line). */
export function startupTable(rounds: readonly { round: number; startup?: StartupTimes }[]): string[] {
  const known = rounds.filter((r) => r.startup !== undefined);
  if (known.length === 0) return [];
  return [
    '',
    "The service's start-up, in seconds from the POST (the worker's log lines, `--worker-env LOG_LEVEL=info`):",
    '',
    '| Round | First run claimed | Batch gathered | Sandbox started | Tests listed | First test began |',
    '|---|---|---|---|---|---|',
    ...known.map(({ round, startup: s }) => {
      const cells = [s?.claimedMs, s?.batchMs, s?.sandboxMs, s?.listedMs, s?.firstTestMs].map(secs);
      return `| ${round} | ${cells.join(' | ')} |`;
    }),
  ];
}
