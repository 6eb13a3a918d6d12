import { isTerminalRunStatus, type RunStatusReport, type SuiteRunStatusReport } from '@testrun/contracts';
import { isReportable, openCommand, reportFailure, type CommandContext, type ConnectionFlags } from './connection';
import { UsageError } from './parse-options';
import { EXIT, exitCodeFor, flakyMark, statusText } from './report';

/** Flags of `testrun status`. */
export interface StatusFlags extends ConnectionFlags {
  json?: boolean;
}

/**
 * `testrun status ID`: one read of a run (`run_…`) or suite run (`srun_…`). Exit code: the verdict
 * (0 passed, 1 failed, 2 error or skipped) when terminal, 3 while still queued or running, 2 on
 * an API error.
 */
export async function runStatusCommand(id: string, flags: StatusFlags, ctx: CommandContext): Promise<number> {
  const kind = id.startsWith('srun_') ? 'suite' : id.startsWith('run_') ? 'run' : null;
  if (!kind) throw new UsageError(`ID must be a run id (run_…) or a suite run id (srun_…), got "${id}"`);
  const json = Boolean(flags.json);
  const { out, client } = openCommand(flags, ctx, { json });
  try {
    if (kind === 'suite') {
      const s = await client.getSuiteRun(id);
      const report: SuiteRunStatusReport = {
        ...s,
        exitCode: isTerminalRunStatus(s.status) ? exitCodeFor(s.status, false) : EXIT.pending,
      };
      if (json) {
        out.result(JSON.stringify(report, null, 2));
      } else {
        const lines = [
          `Suite run ${s.id}: ${s.status}`,
          `  ${s.passed_count} passed${s.flaky_count > 0 ? ` (${s.flaky_count} flaky: passed only on a retry)` : ''}, ${s.failed_count} failed, ${s.error_count} error, ${s.skipped_count} skipped of ${s.total_count}`,
          ...s.tests.map(
            (t) =>
              `  ${t.status.padEnd(8)} ${t.name} (${t.runId})${t.flaky ? ` ${flakyMark(t)}` : ''}${t.skipReason ? ` [${t.skipReason}]` : ''}`,
          ),
          `  ${s.suiteRunUrl}`,
        ];
        out.result(lines.join('\n'));
      }
      return report.exitCode;
    }
    const { run, viewUrl } = await client.getRunWithLink(id);
    const report: RunStatusReport = {
      ...run,
      viewUrl,
      exitCode: isTerminalRunStatus(run.status) ? exitCodeFor(run.status, false) : EXIT.pending,
    };
    if (json) {
      out.result(JSON.stringify(report, null, 2));
    } else {
      const lines = [
        `Run ${run.id} of "${run.test_name}" (${run.test_id}): ${statusText(run)}`,
        `  ${run.result_summary}`,
      ];
      for (const a of run.previous_attempts) lines.push(`  attempt ${a.attempt} ${a.status}: ${a.result_summary}`);
      if (run.error) lines.push(`  error: ${run.error.code}${run.error.step ? ` at step ${run.error.step}` : ''}`);
      if (run.skip_reason) lines.push(`  skipped: ${run.skip_reason}`);
      if (viewUrl) lines.push(`  ${viewUrl}`);
      out.result(lines.join('\n'));
    }
    return report.exitCode;
  } catch (e) {
    if (!isReportable(e)) throw e;
    return reportFailure(e, out, json);
  }
}
