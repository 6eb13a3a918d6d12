import {
  formatDuration,
  QUEUE_WAIT_WORTH_SAYING_MS,
  queueWaitWords,
  type QueueWait,
  type ReportCounts,
  type ReportSetupTest,
  type ReportTest,
  type RunStatus,
  type SuiteRunStatus,
} from '@testrun/contracts';
import { redact } from './parse-options';
import { displayName, flakyMark, setupDisplayName } from './report';

/** Where the command writes, with every string passed through redaction of header values. */
export interface OutputStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

const MARK: Partial<Record<RunStatus, string>> = {
  passed: 'passed ',
  failed: 'FAILED ',
  error: 'ERROR  ',
  skipped: 'skipped',
};

/** How often a CI log repeats that the runs still wait for a worker. */
const QUEUED_REPEAT_MS = 30_000;

/**
 * Human output of a command. Progress goes to stderr, so stdout carries only the result (the
 * `--json` document, or the summary). On a TTY progress is one line rewritten in place, with each
 * finished test printed above it; elsewhere (CI logs) it is one plain line per finished test.
 */
export class Output {
  private readonly live: boolean;
  private readonly printed = new Set<string>();
  private statusLine = '';
  /** When the last "queued: waiting for a worker" line was printed (CI logs repeat it now and then). */
  private queuedSaidAt: number | null = null;
  /** Whether the line that says how long the runs waited in the queue, and why, was printed. */
  private waitSaid = false;

  constructor(
    private readonly streams: OutputStreams,
    private readonly secrets: readonly string[],
    private readonly json: boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.live = Boolean(streams.stderr.isTTY) && process.env.TERM !== 'dumb';
  }

  /** A progress or diagnostic line (stderr). */
  info(line: string): void {
    this.clearLine();
    this.streams.stderr.write(`${this.safe(line)}\n`);
    this.redraw();
  }

  /** The final result on stdout: the JSON document with --json, the human summary otherwise. */
  result(text: string): void {
    this.clearLine();
    this.statusLine = '';
    this.streams.stdout.write(`${this.safe(text)}\n`);
  }

  /** The summary for people: on stdout normally, on stderr with --json (stdout holds the document). */
  summary(text: string): void {
    if (this.json) this.info(text);
    else this.result(text);
  }

  /** Prints the setup tests that ended since the last call, as tests are printed, named with their project. */
  setups(setups: readonly ReportSetupTest[]): void {
    for (const t of setups) {
      const mark = MARK[t.status];
      if (this.printed.has(t.id) || mark === undefined) continue;
      this.printed.add(t.id);
      const summary = t.status === 'passed' ? '' : ` — ${t.result_summary}`;
      this.info(`  ${mark} ${setupDisplayName(t)} (${formatDuration(t.duration_ms)})${summary}`);
    }
  }

  /**
   * Prints tests that became terminal since the last call and refreshes the status line. `wait`:
   * the service's account of the wait in the queue (the suite run's, or the first run's), when it
   * gives one: while the runs wait, the status says why; once they start, one line says how long.
   */
  progress(
    tests: readonly ReportTest[],
    counts: ReportCounts,
    status: SuiteRunStatus,
    startedAt: number,
    wait?: QueueWait | null,
  ): void {
    if (status !== 'queued') this.sayWaited(wait);
    for (const t of tests) {
      const mark = MARK[t.status];
      if (this.printed.has(t.runId) || mark === undefined) continue;
      this.printed.add(t.runId);
      const flaky = t.flaky ? ` ${flakyMark(t)}` : '';
      const duration = t.durationMs === null ? '' : ` (${formatDuration(t.durationMs)})`;
      this.info(
        `  ${mark} ${displayName(t)}${flaky}${duration}${t.result_summary && t.status !== 'passed' ? ` — ${t.result_summary}` : ''}`,
      );
    }
    const finished = counts.passed + counts.failed + counts.error + counts.skipped;
    const waited = formatDuration(this.now() - startedAt);
    const queued = `queued: waiting for a worker (${waited}${wait ? `; ${queueWaitWords(wait)}` : ''})`;
    if (status === 'queued') this.sayQueued(queued);
    this.statusLine =
      `${status === 'queued' ? queued : status} · ${finished}/${counts.total} finished · ` +
      `${counts.passed} passed · ${counts.failed} failed · ${counts.error} error · ${counts.skipped} skipped · ${waited}`;
    this.redraw();
  }

  /**
   * Everything still waits in the queue: on a TTY the status line says so; in a CI log a line says
   * it once, then every 30 s while it lasts, so a quiet log never looks hung.
   */
  private sayQueued(line: string): void {
    if (this.live) return;
    const now = this.now();
    if (this.queuedSaidAt !== null && now - this.queuedSaidAt < QUEUED_REPEAT_MS) return;
    this.queuedSaidAt = now;
    this.info(line);
  }

  /**
   * Once the runs have left the queue, how long they waited there and why, when the service says
   * and the wait was long enough to matter (a second or more).
   */
  private sayWaited(wait: QueueWait | null | undefined): void {
    if (this.waitSaid || wait?.waited_ms == null || wait.waited_ms < QUEUE_WAIT_WORTH_SAYING_MS) return;
    this.waitSaid = true;
    this.info(`started after ${formatDuration(wait.waited_ms)} in the queue: ${queueWaitWords(wait)}`);
  }

  /** Removes the live status line before the command ends. */
  done(): void {
    this.clearLine();
    this.statusLine = '';
  }

  private redraw(): void {
    if (!this.live || !this.statusLine) return;
    const width = Math.max(20, (this.streams.stderr.columns ?? 100) - 1);
    this.streams.stderr.write(`\r\x1b[2K${this.safe(this.statusLine).slice(0, width)}`);
  }

  private clearLine(): void {
    if (this.live && this.statusLine) this.streams.stderr.write('\r\x1b[2K');
  }

  /** `text` with every secret replaced, for files the command writes (JUnit). */
  redactText(text: string): string {
    return this.safe(text);
  }

  private safe(text: string): string {
    return redact(text, this.secrets);
  }
}

/** Columns padded to their widest cell, two spaces apart: a table that `column`, `awk` and people read. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [header, ...rows]
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
