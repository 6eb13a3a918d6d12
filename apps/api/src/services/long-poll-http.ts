import type { Response } from 'express';

/** A signal that aborts when the client closes the connection before its answer was sent. */
export function clientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableEnded) controller.abort();
  });
  return controller.signal;
}

/**
 * `Preference-Applied: wait=N` when the wait was honoured (RFC 7240), and `Vary: Prefer` always on a
 * GET that may wait, so no cache hands a waited answer to a request that did not ask to wait.
 */
export function preferenceApplied(res: Response, applied: number | null): void {
  res.vary('Prefer');
  if (applied !== null) res.setHeader('Preference-Applied', `wait=${applied}`);
}
