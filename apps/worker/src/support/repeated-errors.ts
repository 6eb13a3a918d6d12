/** Options of {@link foldRepeats}. */
export interface FoldRepeatsOptions {
  /** Shortest time between two reports of the same message. Default 10000 ms. */
  everyMs?: number;
  /** The clock. Default `Date.now`. */
  now?: () => number;
}

/**
 * An error handler that reports each distinct message at most once every `everyMs`, with how many
 * of the same were folded into it since the last report. A Redis connection that is down errors on
 * every reconnect attempt, several times a second, for as long as the outage lasts; that is one fact,
 * not hundreds of log lines. Distinct messages (a lock lost for one job, then another) are each reported.
 */
export function foldRepeats(
  report: (error: Error, folded: number) => void,
  options: FoldRepeatsOptions = {},
): (error: Error) => void {
  const everyMs = options.everyMs ?? 10_000;
  const now = options.now ?? Date.now;
  const seen = new Map<string, { at: number; folded: number }>();
  return (error) => {
    const t = now();
    const last = seen.get(error.message);
    if (last && t - last.at < everyMs) {
      last.folded += 1;
      return;
    }
    // Messages that stopped coming are forgotten (one per job would otherwise pile up); a count
    // still to tell is kept a while for the next report of its message.
    for (const [message, entry] of seen)
      if (t - entry.at >= (entry.folded ? everyMs * 10 : everyMs)) seen.delete(message);
    seen.set(error.message, { at: t, folded: 0 });
    report(error, last?.folded ?? 0);
  };
}
