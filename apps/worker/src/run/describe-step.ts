import { formatDuration, type Step } from '@testrun/contracts';
import { displayUrl, formatPattern, quote } from '../support/text-format';

/** A label for summaries and the timeline: `click "text=Sign in"`, `goto "/"`, `wait 500 ms`. */
export function describeStep(step: Step): string {
  switch (step.action) {
    case 'goto':
      return `goto ${quote(displayUrl(step.url), 80)}`;
    case 'press':
      return step.selector === undefined
        ? `press ${quote(step.key)}`
        : `press ${quote(step.key)} on ${quote(step.selector, 80)}`;
    case 'expectUrl':
      return step.url !== undefined
        ? `expectUrl ${quote(displayUrl(step.url), 80)}`
        : `expectUrl ${formatPattern(step.pattern ?? '', step.flags)}`;
    case 'expectTitle':
      return step.title !== undefined
        ? `expectTitle ${quote(step.title, 80)}`
        : `expectTitle ${formatPattern(step.pattern ?? '', step.flags)}`;
    case 'screenshot':
      return step.name !== undefined ? `screenshot ${quote(step.name, 80)}` : 'screenshot';
    case 'expectScreenshot':
      return step.selector === undefined
        ? `expectScreenshot ${quote(step.name)}`
        : `expectScreenshot ${quote(step.name)} of ${quote(step.selector, 80)}`;
    case 'wait':
      return `wait ${formatDuration(step.ms)}`;
    default:
      return `${step.action} ${quote(step.selector, 80)}`;
  }
}

/**
 * What the step acts on, for the timeline's `target` column: the selector, the URL resolved against
 * the base URL, the expected title, `500 ms`.
 */
export function describeTarget(step: Step, baseUrl: string): string {
  switch (step.action) {
    case 'goto':
      return resolveForDisplay(step.url, baseUrl);
    case 'press':
      return step.selector ?? 'page';
    case 'expectUrl':
      return step.url !== undefined
        ? resolveForDisplay(step.url, baseUrl)
        : formatPattern(step.pattern ?? '', step.flags);
    case 'expectTitle':
      return step.title ?? formatPattern(step.pattern ?? '', step.flags);
    case 'screenshot':
      return step.name ?? (step.fullPage ? 'full page' : 'viewport');
    case 'expectScreenshot':
      return step.selector ?? (step.fullPage ? 'full page' : 'viewport');
    case 'wait':
      return formatDuration(step.ms);
    default:
      return step.selector;
  }
}

function resolveForDisplay(url: string, baseUrl: string): string {
  try {
    return displayUrl(new URL(url, baseUrl).href);
  } catch {
    return displayUrl(url);
  }
}

/** The parts of a step result a summary needs; a result read back from the database fits too. */
export interface SummarizableResult {
  outcome: string;
  /** A failure or error code: `screenshot_changed` words the summary as the Playwright executor does. */
  code?: string | null;
  message?: string | null;
  reason?: string | null;
}

/**
 * The run's one-sentence summary when a step did not pass:
 * `Failed at step 3 (click "text=Sign in"): element not found within 5 s`, `Screenshot changed at
 * step 2 (expectScreenshot "home"): home.png differs from its baseline: …`.
 */
export function summarizeFailure(stepIndex1Based: number, step: Step, result: SummarizableResult): string {
  const verdict =
    result.code === 'screenshot_changed' ? 'Screenshot changed' : result.outcome === 'failed' ? 'Failed' : 'Error';
  const why = result.reason ?? result.message ?? 'unknown problem';
  return `${verdict} at step ${stepIndex1Based} (${describeStep(step)}): ${why}`;
}

/** The run's one-sentence summary when every step passed: `Passed: 4 steps in 1.2 s.` */
export function summarizePass(stepCount: number, durationMs: number): string {
  return `Passed: ${stepCount} step${stepCount === 1 ? '' : 's'} in ${formatDuration(durationMs)}.`;
}
