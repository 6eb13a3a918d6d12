/**
 * Which runs a read of details (steps, artifacts, page events, history) is for: the runs given by
 * id (a run page, a fragment), or the runs a suite page shows open (every run of the suite run but
 * its passes and skips; see showsDetailsInline). The second lets a suite page read its runs and
 * their details at the same time, rather than one after the other.
 */
export type RunScope = { runIds: string[] } | { openOfSuiteRun: string };

/** The condition on a `runs` row under `alias`, the statement's name suffix and its one parameter. */
export function scopeSql(scope: RunScope, alias: string): { where: string; name: string; param: unknown } {
  return 'runIds' in scope
    ? { where: `${alias}.id = ANY($1::text[])`, name: 'ids', param: scope.runIds }
    : {
        where: `${alias}.suite_run_id = $1 AND ${alias}.status NOT IN ('passed', 'skipped')`,
        name: 'open',
        param: scope.openOfSuiteRun,
      };
}
