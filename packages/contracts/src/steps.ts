import { Type, type Static, type TLiteral, type TObject, type TProperties } from '@sinclair/typebox';
import { capOf, STEP_LIMITS } from './limits';

// The steps of a step test: one schema per action, and the union of them a test's `steps` holds.

// Every string field of a step may reference `{{vars.NAME}}` and `{{secrets.NAME}}` (see
// variables.ts): the worker puts the values in just before the step runs. A project file holds the
// reference only, never a secret's value.
const Selector = Type.String({ minLength: 1, maxLength: 1_000, description: 'A Playwright selector.' });
const Text = Type.String({ maxLength: 10_000 });
const Pattern = Type.String({ minLength: 1, maxLength: 1_000, description: 'A JavaScript regular expression source.' });
const Flags = Type.String({ pattern: '^[dgimsuvy]*$', maxLength: 8, description: 'Regular expression flags.' });

const common = {
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Label shown in the timeline.' })),
  timeoutMs: Type.Optional(
    Type.Integer({
      minimum: STEP_LIMITS.minStepTimeoutMs,
      maximum: STEP_LIMITS.maxStepTimeoutMs,
      ...capOf('STEP_LIMITS.maxStepTimeoutMs'),
      description: `How long the step may wait for its element or condition (default ${STEP_LIMITS.defaultStepTimeoutMs} ms).`,
    }),
  ),
};

/** One action's schema: `action`, the common fields, and its own (which may narrow a common one: `name`). */
function step<A extends string, P extends TProperties>(action: A, props: P, description: string) {
  const properties = { action: Type.Literal(action), ...common, ...props } as { action: TLiteral<A> } & Omit<
    typeof common,
    keyof P
  > &
    P;
  return Type.Object(properties, { additionalProperties: false, description });
}

export const GotoStep = step(
  'goto',
  { url: Type.String({ minLength: 1, maxLength: 2_048 }) },
  'Navigate; url is resolved against the run base URL.',
);
export const ClickStep = step('click', { selector: Selector }, 'Click an element.');
export const FillStep = step('fill', { selector: Selector, value: Text }, 'Fill an input.');
export const PressStep = step(
  'press',
  { selector: Type.Optional(Selector), key: Type.String({ minLength: 1, maxLength: 100 }) },
  'Press a key (on an element, or the page).',
);
export const SelectStep = step(
  'select',
  { selector: Selector, value: Type.Union([Text, Type.Array(Text, { minItems: 1, maxItems: 100 })]) },
  'Select option(s) by value or label.',
);
export const CheckStep = step('check', { selector: Selector }, 'Check a checkbox or radio.');
export const UncheckStep = step('uncheck', { selector: Selector }, 'Uncheck a checkbox.');
export const HoverStep = step('hover', { selector: Selector }, 'Hover an element.');
export const WaitForStep = step(
  'waitFor',
  {
    selector: Selector,
    state: Type.Optional(
      Type.Union([Type.Literal('attached'), Type.Literal('detached'), Type.Literal('visible'), Type.Literal('hidden')]),
    ),
  },
  'Wait for an element to reach a state (default visible).',
);
export const ExpectTextStep = step(
  'expectText',
  { selector: Selector, text: Type.Optional(Text), pattern: Type.Optional(Pattern), flags: Type.Optional(Flags) },
  'Expect the element text to contain text, or match pattern.',
);
export const ExpectVisibleStep = step('expectVisible', { selector: Selector }, 'Expect an element to be visible.');
export const ExpectHiddenStep = step(
  'expectHidden',
  { selector: Selector },
  'Expect an element to be hidden or absent.',
);
export const ExpectUrlStep = step(
  'expectUrl',
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2_048 })),
    pattern: Type.Optional(Pattern),
    flags: Type.Optional(Flags),
  },
  'Expect the page URL to equal url (resolved against the base URL), or match pattern.',
);
export const ExpectTitleStep = step(
  'expectTitle',
  { title: Type.Optional(Text), pattern: Type.Optional(Pattern), flags: Type.Optional(Flags) },
  'Expect the page title to equal title, or match pattern.',
);
export const ScreenshotStep = step(
  'screenshot',
  { fullPage: Type.Optional(Type.Boolean()) },
  'Take a named screenshot.',
);
/**
 * A screenshot's name in `expectScreenshot`: one safe file name (the service adds `.png`), so that
 * its baseline's path can never leave the test's own folder of baselines.
 */
export const SCREENSHOT_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$';

/** Most selectors one `expectScreenshot` masks. */
const MAX_MASKS = 20;

export const ExpectScreenshotStep = step(
  'expectScreenshot',
  {
    name: Type.String({
      pattern: SCREENSHOT_NAME_PATTERN,
      description:
        "The screenshot's name: letters, digits, `-` and `_`, starting with a letter or digit, at most 100 characters. Its baseline is `<name>.png` of this test (the service adds `.png`).",
    }),
    selector: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1_000, description: 'Screenshot this one element instead of the page.' }),
    ),
    fullPage: Type.Optional(
      Type.Boolean({ description: 'The whole scrollable page, not the viewport (default false).' }),
    ),
    mask: Type.Optional(
      Type.Array(Selector, {
        minItems: 1,
        maxItems: MAX_MASKS,
        description: 'Elements covered by a pink box before the screenshot is taken: content that changes by itself.',
      }),
    ),
    maxDiffPixels: Type.Optional(Type.Integer({ minimum: 0, description: 'How many pixels may differ (default 0).' })),
    maxDiffPixelRatio: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: 'Which share of the pixels may differ, 0 to 1 (default 0).' }),
    ),
    threshold: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description:
          'How different two pixels may be in colour and still be the same, 0 (strict) to 1 (lax) (default 0.2).',
      }),
    ),
  },
  "Compare a screenshot of the page (or of one element) with the baseline the service keeps for this test and name, as Playwright's toHaveScreenshot does (docs/VISUAL.md).",
);
export const WaitStep = step(
  'wait',
  { ms: Type.Integer({ minimum: 0, maximum: STEP_LIMITS.maxWaitMs, ...capOf('STEP_LIMITS.maxWaitMs') }) },
  'Pause (bounded).',
);

const STEP_SCHEMAS = [
  GotoStep,
  ClickStep,
  FillStep,
  PressStep,
  SelectStep,
  CheckStep,
  UncheckStep,
  HoverStep,
  WaitForStep,
  ExpectTextStep,
  ExpectVisibleStep,
  ExpectHiddenStep,
  ExpectUrlStep,
  ExpectTitleStep,
  ScreenshotStep,
  ExpectScreenshotStep,
  WaitStep,
] as const;

type StepSchemas = (typeof STEP_SCHEMAS)[number];
export type Step = Static<StepSchemas>;
export type StepAction = Step['action'];
export type StepOf<A extends StepAction> = Extract<Step, { action: A }>;
export const STEP_ACTIONS = STEP_SCHEMAS.map(
  (s: TObject) => (s.properties.action as unknown as { const: string }).const,
) as StepAction[];

/** One step: a discriminated union on `action`, so a bad step reports the errors of its own action only. */
export const StepSchema = Type.Unsafe<Step>({
  type: 'object',
  discriminator: { propertyName: 'action' },
  properties: { action: { type: 'string', enum: STEP_ACTIONS } },
  required: ['action'],
  oneOf: STEP_SCHEMAS,
});
