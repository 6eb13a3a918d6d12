import type { ActionContext } from './types';

/** Time left in the step, never 0: Playwright reads a timeout of 0 as "wait forever". */
export function timeLeft(ctx: ActionContext): number {
  return Math.max(1, ctx.endsAt - Date.now());
}

/** What every Playwright call of a step is given: the time left, and the run's cancel signal. */
export type CallOptions = { timeout: number; signal?: AbortSignal };

export function callOptions(ctx: ActionContext): CallOptions {
  return ctx.signal ? { timeout: timeLeft(ctx), signal: ctx.signal } : { timeout: timeLeft(ctx) };
}

/** Resolves after `ms`, or at once when `signal` is aborted (a cancelled run's wait ends with it). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}
