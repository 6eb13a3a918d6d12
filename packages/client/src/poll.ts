import { isTransientError, TestrunWaitTimeoutError } from './errors';
import type { WaitOptions } from './options';

/** What one read of a wait loop gives: the state, and whether the server already waited for a change. */
export type PollRead<T> = { state: T; waited: boolean };
export type PollReadOptions = { deadline: number; signal?: AbortSignal; waitSeconds?: number };

export const DEFAULT_WAIT_TIMEOUT_MS = 15 * 60_000;
export const DEFAULT_POLL_INTERVAL_MS = 3_000;
/** The longest `Prefer: wait` the wait helpers ask for: well inside proxies' idle time-outs. */
const LONG_POLL_SECONDS = 25;

/**
 * The wait loop of the client's `waitFor…` methods: reads the state (a long poll unless
 * `options.longPoll` is false) until `done` says it is final, and rejects with
 * {@link TestrunWaitTimeoutError} when the budget runs out.
 */
export async function poll<T>(
  clock: { now: () => number; sleep: (ms: number) => Promise<void> },
  what: string,
  options: WaitOptions<T>,
  read: (o: PollReadOptions) => Promise<PollRead<T>>,
  done: (state: T) => boolean,
): Promise<T> {
  const { now, sleep } = clock;
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const interval = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const deadline = now() + timeoutMs;
  let last: T | null = null;
  for (;;) {
    options.signal?.throwIfAborted();
    // Ask the server to hold the answer for a change, leaving a second of the budget to spare.
    const waitSeconds = Math.min(LONG_POLL_SECONDS, Math.floor((deadline - now()) / 1000) - 1);
    let serverWaited = false;
    try {
      const result = await read({
        deadline,
        signal: options.signal,
        ...(options.longPoll !== false && waitSeconds > 0 ? { waitSeconds } : {}),
      });
      last = result.state;
      serverWaited = result.waited;
      options.onProgress?.(last);
      if (done(last)) return last;
    } catch (e) {
      // A rate limit or a fault that outlived the request's own retries is not a verdict: keep
      // waiting while there is budget. Anything else (401, 404, …) will not get better.
      if (!isTransientError(e) || now() >= deadline) {
        if (isTransientError(e)) throw new TestrunWaitTimeoutError(timeoutMs, last, what);
        throw e;
      }
    }
    const left = deadline - now();
    if (left <= 0) throw new TestrunWaitTimeoutError(timeoutMs, last, what);
    // The server held the answer until a change or its wait ran out: ask again at once.
    if (!serverWaited) await sleep(Math.min(interval, left));
  }
}
