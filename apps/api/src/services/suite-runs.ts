import type { SuiteRun, TestEntry } from '@testrun/contracts';
import { suiteRunViewUrl, viewLinkTerms, type Db, type DerivedKeys, type ViewLinkConfig } from '@testrun/core';
import { ApiError } from '../errors';

/** One suite run of the workspace with its children in position order, or 404. */
export async function getSuiteRun(
  db: Db,
  keys: DerivedKeys,
  links: ViewLinkConfig,
  workspaceId: string,
  suiteRunId: string,
): Promise<SuiteRun> {
  const suiteRun = await db.suiteRun.findFirst({
    where: { id: suiteRunId, workspaceId },
    select: {
      viewTokenVersion: true,
      createdAt: true,
      id: true,
      status: true,
      totalCount: true,
      passedCount: true,
      failedCount: true,
      errorCount: true,
      skippedCount: true,
      runs: { orderBy: { position: 'asc' }, select: { id: true, testName: true, status: true, skipReason: true } },
    },
  });
  if (!suiteRun) throw new ApiError('not_found', `No suite run "${suiteRunId}" in this workspace.`);
  return {
    id: suiteRun.id,
    status: suiteRun.status,
    total_count: suiteRun.totalCount,
    passed_count: suiteRun.passedCount,
    failed_count: suiteRun.failedCount,
    error_count: suiteRun.errorCount,
    skipped_count: suiteRun.skippedCount,
    suiteRunUrl: suiteRunViewUrl(
      links.publicBaseUrl,
      keys.view,
      suiteRun.id,
      viewLinkTerms({ createdAt: suiteRun.createdAt, version: suiteRun.viewTokenVersion }, links.viewLinkTtlDays),
    ),
    tests: suiteRun.runs.map((r): TestEntry => ({
      runId: r.id,
      name: r.testName,
      status: r.status,
      skipReason: r.status === 'skipped' ? r.skipReason : null,
    })),
  };
}
