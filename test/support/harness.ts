import { randomBytes } from 'node:crypto';
import { addMember, applyProject, createApiKey, createWorkspace } from '../../packages/admin/src/operations';
import { createPrisma, type Db } from '@testrun/core/db';
import { insertRuns, type CreatedRunRows } from '@testrun/core/runs';
import { deriveKeys } from '@testrun/core/secrets';
import type { ApiKeyScope, EvidenceSettings, Plan, ProjectFile } from '@testrun/contracts';

/** A variable the jest run's setup (test/support/global-setup.ts, per-file-setup.ts) must have set. */
function testEnv(name: 'DATABASE_URL' | 'REDIS_URL' | 'REDIS_PREFIX' | 'ARTIFACTS_DIR'): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run tests through jest, whose global setup sets it`);
  return value;
}

/** A Prisma client on the test database of this jest run. Close it in afterAll. */
export function testDb(): Db {
  return createPrisma({ databaseUrl: testEnv('DATABASE_URL'), max: 4 });
}

/** A unique suffix, so each test builds its own workspace, queue prefix, slugs. */
export function uniqueTag(): string {
  return randomBytes(4).toString('hex');
}

/** A workspace of its own with one member and one key. */
export async function createTenant(
  db: Db,
  options: { plan?: Plan; maxActiveRuns?: number; monthlyRuns?: number; scopes?: ApiKeyScope[] } = {},
) {
  const tag = uniqueTag();
  const workspace = await createWorkspace(db, {
    name: `ws-${tag}`,
    plan: options.plan ?? 'team',
    maxActiveRuns: options.maxActiveRuns,
    monthlyRuns: options.monthlyRuns,
  });
  const email = `owner-${tag}@example.test`;
  await addMember(db, workspace.id, email);
  const key = await createApiKey(db, {
    workspaceId: workspace.id,
    creatorEmail: email,
    name: `key-${tag}`,
    scopes: options.scopes,
  });
  return { workspace, email, key: key.key, keyId: key.id, tag };
}

/** A small project file: suite `smoke` with `count` tests, the last `disabled` of them disabled. */
export function sampleProject(
  slug: string,
  options: { baseUrl?: string; count?: number; disabled?: number; suites?: string[] } = {},
): ProjectFile {
  const count = options.count ?? 2;
  const disabled = options.disabled ?? 0;
  return {
    slug,
    name: `Project ${slug}`,
    baseUrl: options.baseUrl ?? 'http://127.0.0.1:2',
    suites: (options.suites ?? ['smoke']).map((suiteSlug) => ({
      slug: suiteSlug,
      name: `Suite ${suiteSlug}`,
      tests: Array.from({ length: count }, (_, i) => ({
        key: `t${i + 1}`,
        name: `${suiteSlug} test ${i + 1}`,
        enabled: i < count - disabled,
        steps: [{ action: 'goto' as const, url: '/' }],
      })),
    })),
  };
}

export async function applySampleProject(db: Db, workspaceId: string, file: ProjectFile) {
  return applyProject(db, workspaceId, file);
}

/**
 * Creates the runs of a suite's tests the way the API does (core's insertRuns), without a request:
 * a suite run with its children, or loose runs when `suiteRun` is false.
 */
export async function insertSuiteRuns(
  db: Db,
  workspaceId: string,
  suiteId: string,
  options: {
    baseUrl: string;
    headers?: Record<string, string>;
    headersKey?: Buffer;
    suiteRun?: boolean;
    /** As a request's `evidence`: wins over the test's and the project's settings. */
    evidence?: EvidenceSettings;
    /** As a request's `retries`: wins over the tests'. */
    retries?: number;
    /** As a request's `workers`: written over the Playwright tests' config `workers`. */
    workers?: number;
  },
): Promise<CreatedRunRows> {
  const tests = await db.test.findMany({
    where: { suiteId },
    orderBy: { position: 'asc' },
    select: { id: true, enabled: true, evidence: true, project: { select: { evidence: true } } },
  });
  return insertRuns(db, {
    workspaceId,
    suiteId: options.suiteRun === false ? null : suiteId,
    tests: tests.map(({ project, ...t }) => ({ ...t, baseUrl: options.baseUrl, projectEvidence: project.evidence })),
    headers: options.headers,
    evidence: options.evidence,
    retries: options.retries,
    workers: options.workers,
    headersKey: options.headersKey ?? deriveKeys(testSecret()).headers,
  });
}

/** The deployment secret the test processes share (set by test/support/global-setup.ts). */
export function testSecret(): string {
  const secret = process.env.TESTRUN_SECRET;
  if (!secret) throw new Error('TESTRUN_SECRET is not set: run the tests through jest (test/support/global-setup.ts)');
  return secret;
}
