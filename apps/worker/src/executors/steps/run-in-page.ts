import type { BrowserContext, Page } from 'playwright';
import type { Step } from '@testrun/contracts';
import { CANCELLED_RUNNING_OUTCOME, type RunOutcome } from '@testrun/core/runs';
import type { PageAtFailure } from '../../run/artifact-writer';
import type { PageEvent } from '../../browser/page-events';
import type { PageGuard } from '../../browser/page-guard';
import { focusedIsPassword, pageTitle } from '../../browser/page-devtools';
import { inTraceGroup } from '../../run/recording';
import { stepProblemOutcome } from '../../run/run-outcomes';
import { maskStepResult, type RunSecrets } from '../../run/run-secrets';
import type { SecretMask } from '../../run/secret-mask';
import type { StepsAttempt } from './steps-attempt';
import { describeStep, summarizePass } from '../../run/describe-step';
import type { StepOutcomeResult } from '../../run/step-outcome';
import { executeStep, timelineShot } from './execute-step';
import { applyViolation, withBlockedRequest } from './step-guards';
import type { StepContext, StepVisuals } from './types';
import { displayUrl } from '../../support/text-format';
import { resolveStep } from '../../run/variables';

/** What a run's steps need of the guard watching their page. */
type Guarded = Pick<PageGuard, 'violation'>;

/** Where the steps run, and how the mask they grow is handed on. */
export interface InPage {
  page: Page;
  guard: Guarded;
  /** The run's context when it records a trace: each step is then a named group of the trace. */
  traced: BrowserContext | null;
  /** Told of the mask each time it grows (a value typed into a password field). */
  onMask: (mask: SecretMask) => void;
  /** The attempt's baselines, for `expectScreenshot` steps; null when the worker keeps none. */
  visual: StepVisuals | null;
}

/**
 * Runs the steps in order until one does not pass; the steps after it are recorded as skipped. With
 * `traced` (the run's context, when it records a trace) each step is a named group of the trace.
 */
export async function runInPage(
  attempt: StepsAttempt,
  where: InPage,
  steps: readonly Step[],
  secrets: RunSecrets,
): Promise<RunOutcome> {
  const { run, clock, writer, signal } = attempt;
  const { page, guard, traced } = where;
  const started = Date.now();
  const deadline = started + run.timeoutMs;
  const ctx: StepContext = {
    baseUrl: run.baseUrl,
    deadline,
    budgetMs: run.timeoutMs,
    targetPolicy: attempt.policy,
    signal,
    ...(where.visual ? { visual: where.visual } : {}),
  };
  let mask = secrets.mask;
  for (const [i, step] of steps.entries()) {
    const index = i + 1;
    if (attempt.signal.aborted) return { status: 'error', ...CANCELLED_RUNNING_OUTCOME, step: index };
    // Variables are put in just before the step runs; what is stored shows the reference and masks the value.
    const resolved = resolveStep(step, secrets.values);
    const label = `${index}. ${mask.text(describeStep(step))}`;
    const executed = await clock.time(inTraceGroup(traced, label, () => executeStep(page, resolved, ctx)));
    if (signal.aborted) {
      // Nothing more is asked of the page: the run ends `cancelled` at this step.
      writer.recordStep(index, step, maskStepResult(mask, executed), null, null);
      return { status: 'error', ...CANCELLED_RUNNING_OUTCOME, step: index };
    }
    // A value typed into a password field is a secret from here on, wherever the run writes it.
    const password = await filledPassword(page, resolved, executed);
    if (password !== null) {
      mask = mask.with(password);
      where.onMask(mask);
    }
    const result = maskStepResult(mask, applyViolation(withBlockedRequest(executed, attempt.blocked), guard.violation));
    const time = <T>(work: Promise<T>) => clock.time(work);
    const mode = run.evidence.screenshots;
    const shot = await timelineShot(page, { index, result, mode, deadline, mask, time });
    const problem = stepProblemOutcome(index, step, result);
    const at = problem ? await pageAtFailure(page, mask) : null;
    writer.recordStep(index, step, result, shot, at);
    if (problem) {
      writer.recordSkipped(steps, index, run.baseUrl);
      return problem;
    }
  }
  return { status: 'passed', resultSummary: summarizePass(steps.length, Date.now() - started) };
}

/** Longest wait for the page's title when a step went wrong: a hung page must not hold the run. */
const PAGE_AT_FAILURE_MS = 1_000;

/**
 * The page's URL and title when a step went wrong (masked); null when the page cannot tell. Read
 * over the worker's DevTools session, so that no action of the worker's joins the trace.
 */
async function pageAtFailure(page: Page, mask: SecretMask): Promise<PageAtFailure | null> {
  if (page.isClosed()) return null;
  const title = await pageTitle(page, PAGE_AT_FAILURE_MS);
  return title === null ? null : { url: mask.text(displayUrl(page.url())), title: mask.text(title) };
}

/** How long the check of a filled field's type may take: a busy page must not hold the run. */
const FILLED_FIELD_CHECK_MS = 1_000;

/** The value a step typed into a password input (a fill that passed), else null. */
async function filledPassword(page: Page, step: Step, result: StepOutcomeResult): Promise<string | null> {
  if (step.action !== 'fill' || result.outcome !== 'passed' || step.value.length === 0) return null;
  return (await focusedIsPassword(page, FILLED_FIELD_CHECK_MS)) ? step.value : null;
}

/** A page event with every secret value masked in its texts. */
export function maskEvent(mask: SecretMask, event: PageEvent): PageEvent {
  if (mask.isEmpty) return event;
  return { ...event, message: mask.text(event.message), url: event.url === null ? null : mask.text(event.url) };
}
