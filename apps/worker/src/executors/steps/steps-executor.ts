// The step language (docs/STEPS.md) as an executor: the run's definition is a list of steps, run in
// order in one page of a fresh browser context, each recorded with its screenshot.
import type { BrowserContext, Page } from 'playwright';
import { recordsEvidence, type Step } from '@testrun/contracts';
import type { RunOutcome } from '@testrun/core/runs';
import { PageEventLog } from '../../browser/page-events';
import { PageGuard } from '../../browser/page-guard';
import { blockedEvents } from '../../network/run-target';
import { routeTargetHeaders } from '../../network/target-headers';
import { stopRecording, traceOptions } from '../../run/recording';
import { withRecordingNotes } from '../../run/run-limits';
import { checkDefinition, invalidDefinitionOutcome, noContextOutcome } from '../../run/run-outcomes';
import { openRunSecrets, type RunSecrets } from '../../run/run-secrets';
import type { Executor } from '../../run/executor';
import { RunBaselines } from './run-baselines';
import { maskEvent, runInPage } from './run-in-page';
import { withStepsAttempt, type StepsAttempt, type StepsExecutorDeps } from './steps-attempt';

/**
 * The steps executor, made with the worker's browser, egress and recordings: checks a run's steps
 * and opens the secrets they use, then runs them in a page of a context of the attempt's own.
 */
export function stepsExecutor(deps: StepsExecutorDeps): Executor {
  return {
    async prepare({ run, db, headersKey, retry }) {
      const checked = checkDefinition(run.steps);
      if ('problem' in checked) return { outcome: invalidDefinitionOutcome(checked.problem) };
      const opened = await openRunSecrets(db, headersKey, run, checked.steps, retry);
      if ('outcome' in opened) return opened;
      const { secrets } = opened;
      const { store } = deps;
      // Read at the attempt's first expectScreenshot only: a test without one costs nothing here.
      const baselinesOf = (steps: StepsAttempt) =>
        store ? new RunBaselines({ db, store, run, writer: steps.writer, retry, limits: steps.limits }) : null;
      const execute = (attempt: Parameters<typeof withStepsAttempt>[1]) =>
        withStepsAttempt(deps, attempt, (steps) => runInContext(steps, checked.steps, secrets, baselinesOf(steps)));
      return { prepared: { mask: secrets.mask, execute } };
    },
  };
}

/** Opens the attempt's context and runs the steps in it; the teardown stores its recordings. */
async function runInContext(
  attempt: StepsAttempt,
  steps: readonly Step[],
  secrets: RunSecrets,
  baselines: RunBaselines | null,
): Promise<RunOutcome> {
  const { run, clock } = attempt;
  let context: BrowserContext;
  try {
    context = await clock.time(attempt.openContext({ viewport: { width: 1280, height: 720 } }));
  } catch (error) {
    return noContextOutcome(error);
  }
  // A cancel never closes the context under the calls still under way on it: Playwright's client
  // throws, outside any caller, on an answer naming an object the close has already disposed of
  // ("Object with guid response@… was not bound in the connection"), and the call it answered never
  // settles (a context closed while its page opens hangs `newPage` for good). The cancel aborts the
  // step's calls instead (StepContext.signal); set-up calls, which take no signal, are short and
  // are let finish. The context is closed by the teardown below, once nothing of the run's is under
  // way; only an attempt that does not unwind is closed under it (untilCancelled).
  attempt.closeUnder(() => {
    void context.close().then(attempt.contextCancelled, () => undefined);
  });
  const guard = new PageGuard(context, attempt.limits, attempt.logger.child({ runId: run.id }));
  const pageEvents = new PageEventLog(context);
  // The mask grows while the steps run (a typed password): the teardown masks with the latest.
  let mask = secrets.mask;
  const onMask = (grown: typeof mask) => {
    mask = grown;
    attempt.maskGrew(grown);
  };
  let page: Page | null = null;
  let outcome: RunOutcome;
  let notes: string[];
  let passed = false;
  try {
    const headersReady = await routeTargetHeaders(context, run.baseUrl, secrets.headers);
    page = await clock.time(context.newPage());
    await clock.time(headersReady(page));
    // The trace starts once the worker's own set-up (routes, page, its DevTools session) is done, so
    // that its action list holds the test's steps alone.
    await clock.time(guard.watchMain(page));
    const traced = recordsEvidence(run.evidence.trace);
    if (traced) await clock.time(context.tracing.start(traceOptions(run.evidence.trace)));
    const where = { page, guard, traced: traced ? context : null, onMask, visual: baselines };
    outcome = await runInPage(attempt, where, steps, secrets);
    // What the screenshots found is kept whatever the outcome, unless the run was cancelled.
    if (baselines && !attempt.signal.aborted) outcome = await baselines.finish(outcome);
    passed = outcome.status === 'passed';
  } finally {
    attempt.closeUnder(null);
    guard.stop();
    pageEvents.stop();
    attempt.writer.recordPageEvents([
      ...pageEvents.events.map((e) => maskEvent(mask, e)),
      ...blockedEvents(attempt.blocked, (text) => mask.text(text), new Date()),
    ]);
    notes = await stopRecording({
      context,
      page,
      headers: secrets.headers,
      mask,
      writer: attempt.writer,
      evidence: run.evidence,
      passed,
      clock,
      logger: attempt.logger,
      scratchDir: attempt.scratchDir,
      boundMs: attempt.teardownMs,
      maxFileBytes: attempt.limits.maxRecordingBytes,
    });
    if (attempt.signal.aborted) attempt.contextCancelled();
    await guard.discardPopupVideos();
    // Step rows and artifacts are written in the background while the browser works; all must be
    // stored before the run is declared finished.
    await attempt.writer.flush();
  }
  return withRecordingNotes(outcome, notes);
}
