import { writeFileSync } from 'node:fs';
import * as core from '@actions/core';
import { TestrunApiError, TestrunClient, TestrunNetworkError } from '@testrun/client';
import { buildJunitXml, redact, UsageError } from '@testrun/cli/ci';
import { formatDuration } from '@testrun/contracts';
import { readInputs } from './inputs';
import { setOutputs, writeSummary } from './report';
import { runSuite } from './run-suite';
import { markMainFinished, markPostPhase } from './state';
import { messageOf, verdictOf, type Outcome } from './verdict';

/**
 * The main step: inputs, enqueue, wait, then outputs, job summary and the step's verdict. Every
 * way of ending sets the outputs and the summary, so a later `if: always()` step can read them.
 */
export async function runMain(env: NodeJS.ProcessEnv): Promise<void> {
  markPostPhase();
  let secrets: readonly string[] = [];
  let failOn = 'not-passed';
  let outcome: Outcome;
  try {
    const inputs = readInputs(env);
    ({ secrets, failOn } = inputs);
    const client = new TestrunClient({
      apiUrl: inputs.apiUrl,
      apiKey: inputs.apiKey,
      userAgent: 'testrun-action',
      onRetry: (r) =>
        core.info(
          `${r.status === null ? 'No answer' : `HTTP ${r.status}`} on ${r.method} ${r.path}; retrying in ${formatDuration(r.delayMs)}`,
        ),
    });
    const report = await runSuite(client, inputs);
    if (inputs.junit) writeFileSync(inputs.junit, redact(buildJunitXml(report), secrets));
    outcome = { kind: 'report', report };
  } catch (e) {
    outcome = failure(e);
  }
  // From here on nothing is left running because of this step: the post step has nothing to cancel.
  markMainFinished();
  setOutputs(outcome);
  await writeSummary(outcome);
  core.info(messageOf(outcome));
  const passed = outcome.kind === 'report' && outcome.report.exitCode === 0;
  if (passed) return;
  const url = outcome.kind === 'report' && outcome.report.suiteRunUrl ? ` ${outcome.report.suiteRunUrl}` : '';
  const text = redact(`${messageOf(outcome)}${url}`, secrets);
  const title = `Testrun ${verdictOf(outcome)}`;
  if (failOn === 'never') core.warning(text, { title });
  else core.setFailed(`${title}: ${text}`);
}

function failure(e: unknown): Outcome {
  if (e instanceof TestrunApiError) return { kind: 'api_error', code: e.code, detail: e.detail };
  if (e instanceof TestrunNetworkError) return { kind: 'api_error', code: 'network', detail: e.message };
  if (e instanceof UsageError) return { kind: 'error', detail: `Input refused: ${e.message}` };
  return { kind: 'error', detail: e instanceof Error ? e.message : String(e) };
}
