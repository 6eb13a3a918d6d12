/** Human durations: `850 ms`, `4.2 s`, `2 min 05 s`, `1 h 02 min`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const totalSeconds = Math.round(ms / 1000);
  if (totalSeconds < 3600)
    return `${Math.floor(totalSeconds / 60)} min ${String(totalSeconds % 60).padStart(2, '0')} s`;
  const minutes = Math.round(totalSeconds / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** A UTC timestamp people can read without JavaScript; `<time datetime>` carries the exact instant. */
export function formatInstant(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Words for the machine codes a run carries (contracts' RUN_ERROR_CODES, RUN_FAILURE_CODES, skip reasons). */
const CODE_WORDS: Record<string, string> = {
  target_unreachable: 'Target unreachable',
  browser_crashed: 'Browser crashed',
  invalid_definition: 'Invalid test definition',
  timeout: 'Time budget exceeded',
  worker_lost: 'Worker lost',
  internal_error: 'Internal error',
  expectation_failed: 'Expectation failed',
  element_not_found: 'Element not found',
  http_error: 'HTTP error',
  test_disabled: 'Test disabled',
};

export function describeCode(code: string): string {
  return CODE_WORDS[code] ?? code.replace(/_/g, ' ');
}
