/**
 * Durations as people read them, the same in run summaries, the view, the CLI and the client's
 * messages: `850 ms`, `4.2 s`, `42 s`, `2 min 05 s`, `1 h 02 min`; `–` when there is none.
 */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Number((ms / 1_000).toFixed(ms < 10_000 ? 1 : 0))} s`;
  const totalSeconds = Math.round(ms / 1_000);
  if (totalSeconds < 3_600)
    return `${Math.floor(totalSeconds / 60)} min ${String(totalSeconds % 60).padStart(2, '0')} s`;
  const minutes = Math.round(totalSeconds / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}
