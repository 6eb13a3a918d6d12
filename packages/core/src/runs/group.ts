/*
 * The group of a Playwright run (docs/PLAYWRIGHT.md, "Batches"): the tests of its suite run that
 * Playwright would not run apart from it, which therefore never run on two Playwright workers at
 * once. Its file's tests in its Playwright project, unless its own test runs apart (`parallel`:
 * `fullyParallel` or a parallel describe); the whole suite run when its config says `workers: 1`.
 * Written once here for the statements that need it: a claim's GROUP_LOCK (claim.ts), and a
 * batch's reservation (batch.ts), which leaves out a candidate whose group runs live elsewhere and
 * reads what the sharing rule (batch-plan.ts) takes the groups of the runs it leads whole by. Each
 * is SQL text over aliases of `runs` (the code's own names, never input), as HOLD_LIVE is; the
 * caller joins the runs on their suite run.
 */

type Field = 'workers' | 'parallel' | 'file' | 'project';

/** A field of the run's Playwright step, as text (null when the step has none). */
const step = (run: string, field: Field) => `${run}.steps->'playwright'->>'${field}'`;

/** Whether the run's group is its whole suite run (`workers: 1`); null when its config gave no number. */
export const wholeSuite = (run: string) => `${step(run, 'workers')} = '1'`;

/** Whether the run's test stays with its file: Playwright would not run it apart (`parallel`). Never null. */
export const staysWithFile = (run: string) => `(${step(run, 'parallel')}) IS DISTINCT FROM 'true'`;

/** Which of the file's runs {@link inGroup} counts. */
export interface GroupScope {
  /** Only the runs of the run's Playwright project (false: the file's runs of every project). */
  project: boolean;
  /** Only the runs that themselves stay with their file (false: a test of it that runs apart too). */
  otherStays: boolean;
}

/**
 * SQL: whether the run `other` is of the group of the run `run` (aliases of two runs of one suite
 * run): `run`'s config says `workers: 1`, or `run` stays with its file and `other` is of that file
 * (in `run`'s Playwright project, and itself staying with it, as `scope` asks).
 */
export function inGroup(run: string, other: string, scope: GroupScope): string {
  const file = [`${step(other, 'file')} = ${step(run, 'file')}`];
  if (scope.project) file.push(`${step(other, 'project')} IS NOT DISTINCT FROM ${step(run, 'project')}`);
  if (scope.otherStays) file.push(staysWithFile(other));
  return `(${wholeSuite(run)} OR (${staysWithFile(run)} AND ${file.join(' AND ')}))`;
}

/**
 * SQL: whether the run is live, so that it holds its group: its worker's hold (`held_until`) or its
 * batch's lease has not lapsed (a run whose worker died holds nothing). Never null.
 */
export const liveRun = (run: string) =>
  `(coalesce(${run}.held_until > now(), false) OR coalesce(${run}.batch_lease_until >= now(), false))`;
