import type { Locator, Page } from 'playwright';
import type { Step, StepAction, StepOf } from '@testrun/contracts';
import { isTimeoutError } from './classify-error';
import { countQuickly, explainElementError } from './element-errors';
import { expectScreenshot } from './expect-screenshot';
import { expectText, expectTitle, expectUrl } from './expectations';
import { quote } from '../../support/text-format';
import { goto } from './navigate';
import {
  elementNotFound,
  elementNotReady,
  expectationFailed,
  invalidDefinition,
  outOfTime,
  stepCancelled,
  StepFailure,
} from './step-failure';
import { callOptions, sleep, type CallOptions } from './time-left';
import type { StepEffect } from '../../run/step-outcome';
import type { ActionContext } from './types';

/** One action of the step language: does the step or throws (a StepFailure when it can name why). */
type StepActionFn<A extends StepAction> = (
  page: Page,
  step: StepOf<A>,
  ctx: ActionContext,
) => Promise<StepEffect | undefined>;
type ActionTable = { readonly [A in StepAction]: StepActionFn<A> };

async function actOn(
  page: Page,
  selector: string,
  what: string,
  ctx: ActionContext,
  act: (locator: Locator, options: CallOptions) => Promise<unknown>,
): Promise<undefined> {
  const locator = page.locator(selector);
  try {
    await act(locator, callOptions(ctx));
  } catch (error) {
    throw await explainElementError(error, locator, selector, what, ctx);
  }
}

async function waitForState(
  page: Page,
  selector: string,
  state: 'attached' | 'detached' | 'visible' | 'hidden',
  ctx: ActionContext,
  expectation: boolean,
): Promise<undefined> {
  const locator = page.locator(selector);
  try {
    await locator.waitFor({ state, ...callOptions(ctx) });
  } catch (error) {
    if (!isTimeoutError(error)) throw await explainElementError(error, locator, selector, `be ${state}`, ctx);
    if (state === 'hidden' || state === 'detached') {
      const now = state === 'hidden' ? 'visible' : 'attached';
      throw expectationFailed(`expected ${quote(selector)} to be ${state} but it was still ${now}`, true);
    }
    const count = await countQuickly(locator);
    if (!count) throw elementNotFound(selector, ctx.stepTimeoutMs);
    if (expectation) throw expectationFailed(`expected ${quote(selector)} to be visible but it was hidden`, true);
    throw elementNotReady(selector, 'be visible', ctx.stepTimeoutMs);
  }
}

async function screenshot(page: Page, step: StepOf<'screenshot'>, ctx: ActionContext): Promise<StepEffect> {
  const fullPage = step.fullPage ?? false;
  const body = await page.screenshot({ type: 'png', fullPage, ...callOptions(ctx) });
  return { kind: 'screenshot', name: step.name ?? null, contentType: 'image/png', body, fullPage };
}

/** Pauses for `ms` (bounded by the contract), but never past the test's deadline. */
async function wait(_page: Page, _step: StepOf<'wait'>, ctx: ActionContext): Promise<undefined> {
  await sleep(ctx.endsAt - Date.now(), ctx.signal, ctx.stepEnded);
  // A wait cut short by a cancel did not pass: the step is the cancelled one.
  if (ctx.signal?.aborted) throw new StepFailure(stepCancelled());
  if (ctx.deadlineBound) throw outOfTime();
}

async function press(page: Page, step: StepOf<'press'>, ctx: ActionContext): Promise<undefined> {
  if (step.selector === undefined) {
    await page.keyboard.press(step.key);
    return;
  }
  return actOn(page, step.selector, `press ${quote(step.key)} on`, ctx, (l, options) => l.press(step.key, options));
}

/** Every action of the step language, by name. */
const ACTIONS: ActionTable = {
  goto,
  click: (page, step, ctx) => actOn(page, step.selector, 'click', ctx, (l, options) => l.click(options)),
  fill: (page, step, ctx) => actOn(page, step.selector, 'fill', ctx, (l, options) => l.fill(step.value, options)),
  press,
  select: (page, step, ctx) => {
    const values = Array.isArray(step.value) ? step.value : [step.value];
    const what = `select ${values.map((v) => quote(v, 40)).join(', ')} in`;
    return actOn(page, step.selector, what, ctx, (l, options) => l.selectOption(values, options));
  },
  check: (page, step, ctx) => actOn(page, step.selector, 'check', ctx, (l, options) => l.check(options)),
  uncheck: (page, step, ctx) => actOn(page, step.selector, 'uncheck', ctx, (l, options) => l.uncheck(options)),
  hover: (page, step, ctx) => actOn(page, step.selector, 'hover', ctx, (l, options) => l.hover(options)),
  waitFor: (page, step, ctx) => waitForState(page, step.selector, step.state ?? 'visible', ctx, false),
  expectText,
  expectVisible: (page, step, ctx) => waitForState(page, step.selector, 'visible', ctx, true),
  expectHidden: (page, step, ctx) => waitForState(page, step.selector, 'hidden', ctx, true),
  expectUrl,
  expectTitle,
  screenshot,
  expectScreenshot,
  wait,
};

/** Runs the action a step names; an action the table does not know is a definition error. */
export function runAction(page: Page, step: Step, ctx: ActionContext): Promise<StepEffect | undefined> {
  const action: StepActionFn<StepAction> | undefined = (ACTIONS as Partial<Record<string, StepActionFn<StepAction>>>)[
    step.action
  ];
  if (!action) return Promise.reject(invalidDefinition(`unknown action ${quote(step.action)}`));
  return action(page, step, ctx);
}
