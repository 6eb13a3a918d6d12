// Typed access to what tests read: JSON bodies checked against the contracts' schemas (so a test
// also proves the shape), and Jest's asymmetric matchers typed as the values they stand for.
import {
  compileValidator,
  Deployment,
  DeploymentDryRun,
  DeploymentList,
  EnqueuedReport,
  FailureReport,
  Problem,
  ProjectList,
  ProjectRunsCreated,
  Run,
  RunList,
  RunReport,
  RunStatusReport,
  SingleRunCreated,
  SuiteRun,
  SuiteRunCreated,
  SuiteRunList,
  type ProblemCode,
  type Validation,
} from '@testrun/contracts';

/** A compiled contract schema: gives the value typed, or every error. */
export type Validator<T> = (value: unknown) => Validation<T>;

/** The wire documents tests read, compiled once. */
export const wire = {
  run: compileValidator(Run),
  suiteRun: compileValidator(SuiteRun),
  problem: compileValidator(Problem),
  runCreated: compileValidator(SingleRunCreated),
  suiteRunCreated: compileValidator(SuiteRunCreated),
  runsCreated: compileValidator(ProjectRunsCreated),
  runList: compileValidator(RunList),
  suiteRunList: compileValidator(SuiteRunList),
  projectList: compileValidator(ProjectList),
  deployment: compileValidator(Deployment),
  deploymentDryRun: compileValidator(DeploymentDryRun),
  deploymentList: compileValidator(DeploymentList),
  /** What `testrun run --json` prints after waiting, without waiting, and on failure. */
  runReport: compileValidator(RunReport),
  enqueuedReport: compileValidator(EnqueuedReport),
  failureReport: compileValidator(FailureReport),
  /** What `testrun status --json` prints for a run. */
  runStatusReport: compileValidator(RunStatusReport),
};

/** `value` checked by `validate` and typed by it; a mismatch fails the test with every error. */
export function parsed<T>(validate: Validator<T>, value: unknown): T {
  const result = validate(value);
  if (!result.ok) throw new Error(`unexpected document ${JSON.stringify(value)}: ${JSON.stringify(result.errors)}`);
  return result.value;
}

/** The JSON body of a response, checked by `validate` and typed by it. */
export function bodyOf<T>(res: { body: unknown }, validate: Validator<T>): T {
  return parsed(validate, res.body);
}

/** The problem document of a response; with `code`, also asserts it is that problem. */
export function problemOf(res: { body: unknown }, code?: ProblemCode): Problem {
  const problem = bodyOf(res, wire.problem);
  if (code !== undefined) expect(problem.code).toBe(code);
  return problem;
}

/** `expect.any(String)` typed as a string, for objects that must stay typed. */
export const anyString = (): string => expect.any(String) as string;
/** `expect.stringMatching(pattern)` typed as a string. */
export const stringMatching = (pattern: RegExp | string): string => expect.stringMatching(pattern) as string;

/** The element at `index`, failing the test when there is none. */
export function nth<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new Error(`expected an element at ${index}, got ${items.length} elements`);
  return item;
}

/** The one element of `items`, failing the test unless there is exactly one. */
export function only<T>(items: readonly T[]): T {
  expect(items).toHaveLength(1);
  return nth(items, 0);
}
/** `expect.any(Number)` typed as a number. */
export const anyNumber = (): number => expect.any(Number) as number;
