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

/**
 * Resolves after `ms`, or at once when one of `signals` is aborted: a cancelled run's wait ends
 * with it, and so does one whose step has ended (its timer never outlives the step).
 */
export function sleep(ms: number, ...signals: (AbortSignal | undefined)[]): Promise<void> {
  return new Promise((resolve) => {
    if (signals.some((signal) => signal?.aborted)) return resolve();
    const done = () => {
      clearTimeout(timer);
      for (const signal of signals) signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    for (const signal of signals) signal?.addEventListener('abort', done, { once: true });
  });
}
