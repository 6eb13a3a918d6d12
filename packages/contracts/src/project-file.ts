import { Type, type Static } from '@sinclair/typebox';
import { EvidenceSettings } from './evidence';
import { WebhookEvent } from './webhooks';
import { capOf, RETRY_LIMITS, STEP_LIMITS } from './limits';
import { PlaywrightSection, PlaywrightSelector, playwrightErrors } from './playwright-project';
import type { ProblemFieldError } from './problems';
import { StepSchema, type Step } from './steps';
import { compileValidator, type Validation } from './validate';

/** A project's or suite's slug. */
export const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$';
/** A test's key in its suite. */
export const TEST_KEY_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$';

export const TestDefinition = Type.Object(
  {
    key: Type.String({ pattern: TEST_KEY_PATTERN, description: 'Stable identity of the test inside its suite.' }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    enabled: Type.Optional(Type.Boolean({ description: 'Default true. A disabled test gets a run created skipped.' })),
    timeoutMs: Type.Optional(
      Type.Integer({
        minimum: STEP_LIMITS.minTestTimeoutMs,
        maximum: STEP_LIMITS.maxTestTimeoutMs,
        ...capOf('STEP_LIMITS.maxTestTimeoutMs'),
        description: `Total time budget of the test (default ${STEP_LIMITS.defaultTestTimeoutMs} ms).`,
      }),
    ),
    retries: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: RETRY_LIMITS.maxRetries,
        ...capOf('RETRY_LIMITS.maxRetries'),
        description: `How many times a failed or error run of the test is attempted again (default ${RETRY_LIMITS.defaultRetries}).`,
      }),
    ),
    steps: Type.Array(StepSchema, {
      minItems: 1,
      maxItems: STEP_LIMITS.maxStepsPerTest,
      ...capOf('STEP_LIMITS.maxStepsPerTest'),
    }),
    evidence: Type.Optional(EvidenceSettings),
  },
  { additionalProperties: false },
);
export type TestDefinition = Static<typeof TestDefinition>;

export const SuiteDefinition = Type.Object(
  {
    slug: Type.String({ pattern: SLUG_PATTERN }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Default: the slug.' })),
    tests: Type.Optional(
      Type.Array(TestDefinition, {
        maxItems: STEP_LIMITS.maxTestsPerSuite,
        ...capOf('STEP_LIMITS.maxTestsPerSuite'),
        description: 'Step tests. A suite has exactly one of tests or playwright.',
      }),
    ),
    playwright: Type.Optional(PlaywrightSelector),
  },
  { additionalProperties: false },
);
/** A suite as validated: its name defaulted to its slug, its step tests (none for a Playwright suite). */
export type SuiteDefinition = Omit<Static<typeof SuiteDefinition>, 'name' | 'tests'> & {
  name: string;
  tests: TestDefinition[];
};

/**
 * A webhook endpoint the project file manages: it receives the events of this project's runs and
 * suite runs only. Its signing secret is generated when it is first applied and printed then (never
 * written in the file); applying a file without an endpoint removes it (docs/WEBHOOKS.md).
 */
export const ProjectWebhook = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2_048, format: 'uri', pattern: '^https?://' }),
    events: Type.Optional(Type.Array(WebhookEvent, { minItems: 1, uniqueItems: true })),
  },
  { additionalProperties: false },
);
export type ProjectWebhook = Static<typeof ProjectWebhook>;

export const ProjectFile = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    slug: Type.String({ pattern: SLUG_PATTERN, description: 'Lower-case letters, digits and dashes.' }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    baseUrl: Type.String({ minLength: 1, maxLength: 2_048, format: 'uri', pattern: '^https?://' }),
    evidence: Type.Optional(EvidenceSettings),
    playwright: Type.Optional(PlaywrightSection),
    suites: Type.Array(SuiteDefinition, {
      maxItems: STEP_LIMITS.maxSuitesPerProject,
      ...capOf('STEP_LIMITS.maxSuitesPerProject'),
    }),
    webhooks: Type.Optional(Type.Array(ProjectWebhook, { maxItems: 20 })),
  },
  { additionalProperties: false },
);
/** A project file as validated: every suite's name and tests filled in ({@link SuiteDefinition}). */
export type ProjectFile = Omit<Static<typeof ProjectFile>, 'suites'> & { suites: SuiteDefinition[] };

const validateProjectShape = compileValidator(ProjectFile);

/**
 * Validates a parsed project file: its shape, then what a schema cannot say (unique slugs and keys,
 * exactly one of text/pattern, patterns that compile). Returns every problem with its path.
 */
export function validateProjectFile(value: unknown): Validation<ProjectFile> {
  const shape = validateProjectShape(value);
  if (!shape.ok) return { ok: false, errors: shape.errors };
  const errors: ProblemFieldError[] = playwrightErrors(shape.value);
  const file: ProjectFile = {
    ...shape.value,
    suites: shape.value.suites.map((suite) => ({ ...suite, name: suite.name ?? suite.slug, tests: suite.tests ?? [] })),
  };
  const suiteSlugs = new Set<string>();
  file.suites.forEach((suite, s) => {
    if (suiteSlugs.has(suite.slug))
      errors.push({ path: `/suites/${s}/slug`, message: `duplicates suite slug "${suite.slug}"` });
    suiteSlugs.add(suite.slug);
    const keys = new Set<string>();
    suite.tests.forEach((test, t) => {
      const at = `/suites/${s}/tests/${t}`;
      if (keys.has(test.key))
        errors.push({ path: `${at}/key`, message: `duplicates test key "${test.key}" in suite "${suite.slug}"` });
      keys.add(test.key);
      test.steps.forEach((st, i) => errors.push(...checkStep(st, `${at}/steps/${i}`)));
    });
  });
  const webhookUrls = new Set<string>();
  file.webhooks?.forEach((webhook, w) => {
    const at = `/webhooks/${w}/url`;
    if (!URL.canParse(webhook.url)) errors.push({ path: at, message: 'must be an absolute http(s) URL' });
    else if (new URL(webhook.url).username || new URL(webhook.url).password || new URL(webhook.url).hash)
      errors.push({ path: at, message: 'must not carry credentials or a fragment (deliveries are signed)' });
    if (webhookUrls.has(webhook.url)) errors.push({ path: at, message: `duplicates webhook URL "${webhook.url}"` });
    webhookUrls.add(webhook.url);
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: file };
}

function checkStep(st: Step, at: string): ProblemFieldError[] {
  const errors: ProblemFieldError[] = [];
  const exactlyOne = (literal: 'text' | 'url' | 'title') => {
    const rec = st as Record<string, unknown>;
    const has = rec[literal] !== undefined;
    const hasPattern = rec.pattern !== undefined;
    if (has === hasPattern) errors.push({ path: at, message: `must have exactly one of ${literal} or pattern` });
    if (rec.flags !== undefined && !hasPattern)
      errors.push({ path: `${at}/flags`, message: 'is only valid with pattern' });
    if (typeof rec.pattern === 'string') {
      try {
        new RegExp(rec.pattern, typeof rec.flags === 'string' ? rec.flags : undefined);
      } catch (e) {
        errors.push({ path: `${at}/pattern`, message: `is not a valid regular expression (${(e as Error).message})` });
      }
    }
  };
  if (st.action === 'expectText') exactlyOne('text');
  if (st.action === 'expectUrl') exactlyOne('url');
  if (st.action === 'expectTitle') exactlyOne('title');
  // An element's screenshot is the element's box: a page's full height has no meaning there.
  if (st.action === 'expectScreenshot' && st.selector !== undefined && st.fullPage !== undefined)
    errors.push({ path: `${at}/fullPage`, message: 'is only valid without selector (a screenshot of the page)' });
  return errors;
}
