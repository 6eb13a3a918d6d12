import type { Plan } from './enums';

/**
 * Every cap of the service, in one place, so the problem details, the OpenAPI document, the project
 * file's JSON Schema and docs/API.md ("Limits") state the same numbers. A request over a cap is
 * refused before anything is created, with a detail that names the cap and its value ({@link overCap}).
 */
export const REQUEST_LIMITS = {
  /** Largest request body, in bytes (413 `payload_too_large`). */
  maxBodyBytes: 256 * 1024,
  /** Largest request line plus header block, in bytes (431 `request_header_fields_too_large`). */
  maxHeaderBytes: 16 * 1024,
  /** Most header fields in one request (431 `request_header_fields_too_large`). */
  maxHeaderCount: 100,
  /**
   * Most runs one POST /api/v1/runs may create (422 `too_many_runs`, nothing created): a project of
   * this many tests runs in one request. The runs are one INSERT, so creating this many stays well
   * inside the enqueue transaction's time budget.
   */
  maxRunsPerRequest: 5_000,
} as const;

/** Limits on the `headers` a run sends to its target (422 `limit_exceeded`). */
export const HEADER_LIMITS = {
  maxHeaders: 32,
  maxNameLength: 128,
  maxValueLength: 8_192,
  /** Names and values together, in UTF-8 bytes. */
  maxTotalBytes: 16_384,
} as const;

/** Limits on a request's `variables` and `secretVariables` (422 `limit_exceeded`). */
export const VARIABLE_LIMITS = {
  /** Variables per request, plain and secret counted separately. */
  maxVariables: 64,
  maxValueLength: 4_096,
  /** Names and values of one map together, in UTF-8 bytes. */
  maxTotalBytes: 32_768,
} as const;

/**
 * Bounds of a project file and its step language; a file over one is refused when it is applied.
 * Defaults apply when a test or step does not say. A test's `timeoutMs` is the time budget of each
 * of its runs: the worker ends a run that outlives it `error`/`timeout`.
 */
export const STEP_LIMITS = {
  defaultStepTimeoutMs: 5_000,
  minStepTimeoutMs: 100,
  maxStepTimeoutMs: 60_000,
  defaultTestTimeoutMs: 30_000,
  minTestTimeoutMs: 1_000,
  maxTestTimeoutMs: 600_000,
  maxWaitMs: 30_000,
  maxStepsPerTest: 200,
  maxTestsPerSuite: 1_000,
  maxSuitesPerProject: 200,
} as const;

/**
 * Test attempts after a failed or error one: a test's `retries` in the project file (default 0) and
 * a request's `retries` (422 `limit_exceeded` above the cap). Each retry can take the test's whole
 * time budget again, so the cap bounds how long one run can hold a worker.
 */
export const RETRY_LIMITS = {
  defaultRetries: 0,
  maxRetries: 3,
} as const;

/**
 * A request's `workers` (422 `limit_exceeded` above the cap): as `playwright test --workers`, the
 * most Playwright workers a suite run's batches use, over the config's own. The worker's free slots
 * bound a batch whatever it asks.
 */
export const WORKERS_LIMITS = {
  maxWorkers: 64,
} as const;

/**
 * Caps of a deployment (POST …/deployments and `testrun admin project apply`, both core's
 * `deployProject`), refused with 422 `limit_exceeded` (the admin CLI: "over a limit") before anything
 * is stored. A dry run reports the project file's caps too; it is not a deployment, so it is not
 * counted and not refused for {@link DEPLOYMENT_LIMITS.maxDeploymentsPerDay}.
 */
export const DEPLOYMENT_LIMITS = {
  /**
   * Largest body of POST …/deployments, in bytes (413 `payload_too_large`): larger than
   * {@link REQUEST_LIMITS.maxBodyBytes}, so a file up to {@link DEPLOYMENT_LIMITS.maxProjectFileBytes}
   * fits with its envelope and indentation.
   */
  maxBodyBytes: 2 * 1024 * 1024,
  /** Largest project file, as compact JSON in UTF-8 bytes (however it was sent: JSON or YAML). */
  maxProjectFileBytes: 1024 * 1024,
  /**
   * Deployments (previews included) one project stores in a rolling 24 hours, counted in SQL with
   * the project row locked. Deployments of the last 24 hours are never pruned, so the count is exact.
   */
  maxDeploymentsPerDay: 100,
} as const;

/**
 * Caps of a Playwright bundle (PUT …/bundles/{digest}, `testrun deploy` of a file with `playwright:`):
 * the CLI refuses to pack a larger one, the API answers 413 `payload_too_large` naming the cap. The
 * unpacked caps are checked as the bundle is inflated, by the API as it receives it and by each
 * worker as it extracts it: the count stops at the cap, nothing past it is inflated.
 */
export const BUNDLE_LIMITS = {
  /** Largest bundle, its .tar.gz bytes. */
  maxBytes: 50 * 1024 * 1024,
  /** Largest bundle unpacked: its tar's bytes (every file's bytes, headers and padding), 413 `payload_too_large` over it. */
  maxUnpackedBytes: 256 * 1024 * 1024,
  /** Most files and folders a bundle unpacks to (a folder only implied by a file's path counts), 422 `invalid_bundle` over it. */
  maxFiles: 10_000,
} as const;

/** The unpacked caps a bundle is held to (its workspace's plan's; tests lower them). */
export type BundleCaps = { maxUnpackedBytes: number; maxFiles: number };

/**
 * The unpacked caps of a bundle by its workspace's plan, checked by the API as it receives it.
 * BUNDLE_LIMITS' are the largest of them: what the worker holds every bundle to as it extracts.
 */
export const BUNDLE_CAPS_BY_PLAN = {
  free: { maxUnpackedBytes: 64 * 1024 * 1024, maxFiles: 2_000 },
  team: { maxUnpackedBytes: BUNDLE_LIMITS.maxUnpackedBytes, maxFiles: BUNDLE_LIMITS.maxFiles },
  enterprise: { maxUnpackedBytes: BUNDLE_LIMITS.maxUnpackedBytes, maxFiles: BUNDLE_LIMITS.maxFiles },
} as const satisfies Record<Plan, BundleCaps>;

/**
 * Tests one project file may hold, by the workspace's plan (disabled tests count). Above
 * {@link REQUEST_LIMITS.maxRunsPerRequest} a project is run suite by suite.
 */
export const TESTS_PER_PROJECT = {
  free: 100,
  team: 10_000,
  enterprise: 50_000,
} as const satisfies Record<Plan, number>;

const LIMIT_GROUPS = {
  REQUEST_LIMITS,
  HEADER_LIMITS,
  VARIABLE_LIMITS,
  STEP_LIMITS,
  RETRY_LIMITS,
  WORKERS_LIMITS,
  DEPLOYMENT_LIMITS,
  BUNDLE_LIMITS,
  TESTS_PER_PROJECT,
} as const;
type LimitGroups = typeof LIMIT_GROUPS;
type CapName = { [G in keyof LimitGroups]: `${G}.${keyof LimitGroups[G] & string}` }[keyof LimitGroups];

/** The value of a cap named like `STEP_LIMITS.maxStepsPerTest`. */
export function capValue(cap: CapName): number {
  const [group, key] = cap.split('.') as [keyof LimitGroups, string];
  return (LIMIT_GROUPS[group] as Record<string, number>)[key] ?? Number.NaN;
}

/**
 * Schema annotation naming the cap a `maxItems`, `maxProperties`, `maxLength` or `maximum` enforces,
 * so a refusal's message names it ({@link overCap}); spread it into the schema's options.
 */
export function capOf(cap: CapName): { 'x-limit': CapName } {
  return { 'x-limit': cap };
}

/** A field error's message for a value over a cap: what is wrong, then the cap's name and value. */
export function overCap(cap: string, message: string): string {
  return `${message} (limit ${cap} = ${String(capValue(cap as CapName))})`;
}

const OVER_CAP = /\(limit [A-Z_]+\.[A-Za-z]+ = \d+\)$/;

/** Whether a field error's message says a value is over a cap (as {@link overCap} words it). */
export function isOverCap(message: string): boolean {
  return OVER_CAP.test(message);
}

/** Lone UTF-16 surrogates: not valid Unicode, so they cannot be stored as UTF-8 text. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why Postgres cannot store `text` unchanged (a NUL, or an unpaired surrogate), or null when it can. */
export function unstorableReason(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain a NUL character';
  if (LONE_SURROGATE.test(text)) return 'must not contain an unpaired UTF-16 surrogate';
  return null;
}

const UNSTORABLE = new RegExp(`\u0000|${LONE_SURROGATE.source}`, 'g');

/** `text` with every NUL and unpaired surrogate replaced by U+FFFD, so it can be stored and echoed. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE, '\uFFFD');
}

/**
 * The first string in a JSON value (a property name or a string value, at any depth) that Postgres
 * could not store unchanged, with its JSON Pointer and the reason; null when there is none. Walks
 * with its own stack, so a deeply nested body cannot overflow the call stack.
 */
export function findUnstorableText(value: unknown): { path: string; message: string } | null {
  const pending: { path: string; value: unknown }[] = [{ path: '', value }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { path, value: current } = next;
    if (typeof current === 'string') {
      const message = unstorableReason(current);
      if (message) return { path, message };
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    const entries: [string, unknown][] = Array.isArray(current)
      ? current.map((item: unknown, index) => [String(index), item])
      : Object.entries(current);
    for (const [name, item] of entries.reverse()) {
      const childPath = `${path}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      const nameReason = unstorableReason(name);
      if (nameReason) return { path: childPath, message: `has a name that ${nameReason}` };
      pending.push({ path: childPath, value: item });
    }
  }
  return null;
}
