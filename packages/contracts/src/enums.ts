import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** A string enum whose JSON Schema is `{ type: "string", enum: [...] }` and whose type is the union. */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `T | null` with a plain JSON Schema (`anyOf: [T, {type: "null"}]`). */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

export const RUN_STATUSES = ['queued', 'running', 'passed', 'failed', 'error', 'skipped'] as const;
export const RunStatus = StringEnum(RUN_STATUSES, {
  description: 'queued → running → passed | failed | error; queued → skipped; queued | running → error.',
});
export type RunStatus = Static<typeof RunStatus>;

export const TERMINAL_RUN_STATUSES = ['passed', 'failed', 'error', 'skipped'] as const;
export type TerminalRunStatus = (typeof TERMINAL_RUN_STATUSES)[number];

export function isTerminalRunStatus(status: string): status is TerminalRunStatus {
  return (TERMINAL_RUN_STATUSES as readonly string[]).includes(status);
}

/** The only moves a run may make. Terminal states never change again. */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  queued: ['running', 'skipped', 'error'],
  running: ['passed', 'failed', 'error'],
  passed: [],
  failed: [],
  error: [],
  skipped: [],
};

export const SUITE_RUN_STATUSES = ['queued', 'running', 'passed', 'failed', 'error', 'skipped'] as const;
export const SuiteRunStatus = StringEnum(SUITE_RUN_STATUSES, {
  description:
    'queued while every child is queued; running once any child left queued and not all are terminal; ' +
    'then failed if any child failed, else error if any errored, else skipped if all were skipped, else passed.',
});
export type SuiteRunStatus = Static<typeof SuiteRunStatus>;

/*
 * The closed sets below are stored as Postgres enums of the same values (prisma/schema.prisma);
 * core's db.ts ties each to its database enum at compile time, so neither side can drift.
 */

/** Why a run was never executed (its status is `skipped`). */
// `cancelled`: a cancel request reached the run before a worker started it.
export const SKIP_REASONS = [
  'test_disabled',
  'cancelled',
  // A Playwright test skipped by its own code (test.skip(), test.fixme(), a skip annotation).
  'skipped_in_code',
  // A Playwright test of a project whose browser is not Chromium.
  'browser_unavailable',
] as const;
export const SkipReason = StringEnum(SKIP_REASONS);
export type SkipReason = Static<typeof SkipReason>;

/** Codes of a run that ended `error`: the run itself could not complete. */
export const RUN_ERROR_CODES = [
  'target_unreachable',
  'browser_crashed',
  'invalid_definition',
  'timeout',
  'worker_lost',
  'internal_error',
  // The page went past a limit the worker sets on every run (memory, popups, dialogs).
  'resource_limit',
  // A request of the run was refused by the target network policy.
  'target_blocked',
  // A cancel request stopped the run while it was running.
  'cancelled',
  // A Playwright test's own code (the test, a hook, a fixture) threw.
  'test_code_error',
  // A Playwright setup project the test depends on failed, so it could not run.
  'setup_failed',
] as const;
export const RunErrorCode = StringEnum(RUN_ERROR_CODES);
export type RunErrorCode = Static<typeof RunErrorCode>;

export function isRunErrorCode(code: string | null): code is RunErrorCode {
  return (RUN_ERROR_CODES as readonly (string | null)[]).includes(code);
}

/** Codes of a run that ended `failed`: the product under test misbehaved. Shown in the view. */
export const RUN_FAILURE_CODES = [
  'expectation_failed',
  'element_not_found',
  'http_error',
  // A Playwright test marked `test.fail()` passed.
  'unexpected_pass',
  // A snapshot (`toHaveScreenshot`, `toMatchSnapshot`) differs from the baseline the service keeps.
  'screenshot_changed',
] as const;
export type RunFailureCode = (typeof RUN_FAILURE_CODES)[number];

/** What a run's `outcome_code` column holds: an error code for `error`, a failure code for `failed`. */
export const RUN_OUTCOME_CODES = [...RUN_ERROR_CODES, ...RUN_FAILURE_CODES] as const;
export type RunOutcomeCode = (typeof RUN_OUTCOME_CODES)[number];

/** How one step of a run ended; steps after the first that did not pass are listed `skipped`. */
export const STEP_OUTCOMES = ['passed', 'failed', 'error', 'skipped'] as const;
export type StepOutcome = (typeof STEP_OUTCOMES)[number];

export const PLANS = ['free', 'team', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/**
 * Limits a workspace gets when it is created on (or moved to) a plan; stored per workspace. The
 * tests a project may hold by plan are not stored: `TESTS_PER_PROJECT` in limits.ts.
 */
export const PLAN_DEFAULTS: Readonly<Record<Plan, { maxActiveRuns: number; monthlyRuns: number }>> = {
  free: { maxActiveRuns: 20, monthlyRuns: 1_000 },
  team: { maxActiveRuns: 200, monthlyRuns: 50_000 },
  enterprise: { maxActiveRuns: 2_000, monthlyRuns: 1_000_000 },
};

export const ARTIFACT_KINDS = ['screenshot', 'trace', 'video', 'attachment'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** Counts of a suite run's children by status. */
export type SuiteCounts = {
  total: number;
  queued: number;
  running: number;
  passed: number;
  failed: number;
  error: number;
  skipped: number;
};

/** The counts of a suite run's children, from their statuses. */
export function countStatuses(statuses: readonly RunStatus[]): SuiteCounts {
  const counts: SuiteCounts = {
    total: statuses.length,
    queued: 0,
    running: 0,
    passed: 0,
    failed: 0,
    error: 0,
    skipped: 0,
  };
  for (const status of statuses) counts[status] += 1;
  return counts;
}

/**
 * The aggregate rule: queued while every child is queued; running once any child has left queued
 * and not all are terminal; when all are terminal, failed if any failed, else error if any errored,
 * else skipped if all were skipped, else passed. A child created `skipped` (a disabled test) never
 * was queued, so it has not "left" queued: a suite run whose other children all wait is `queued`.
 */
export function deriveSuiteStatus(c: SuiteCounts): SuiteRunStatus {
  if (c.queued > 0 && c.queued + c.skipped === c.total) return 'queued';
  if (c.passed + c.failed + c.error + c.skipped < c.total) return 'running';
  if (c.failed > 0) return 'failed';
  if (c.error > 0) return 'error';
  if (c.skipped === c.total) return 'skipped';
  return 'passed';
}
