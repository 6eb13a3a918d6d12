import type { ActionContext } from './types';

/** Time left in the step, never 0: Playwright reads a timeout of 0 as "wait forever". */
export function timeLeft(ctx: ActionContext): number {
  return Math.max(1, ctx.endsAt - Date.now());
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
