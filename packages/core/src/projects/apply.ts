import { evidenceSettingsOrNull, isPlaywrightDefinition, type ProjectFile } from '@testrun/contracts';
import { Prisma, type DbTx } from '../db';
import { ID_PREFIX, newId } from '../ids';
import { upsertLivePlaywrightTests, upsertLiveTests, type TestDefinition } from './test-rows';
import { syncProjectWebhooks, type AppliedWebhook } from './webhooks';

export type AppliedProject = {
  projectId: string;
  slug: string;
  suites: Array<{ id: string; slug: string; tests: Array<{ id: string; key: string; name: string }> }>;
  /** The endpoints the file manages, when it has `webhooks` (a new one's secret shown this once). */
  webhooks?: AppliedWebhook[];
};

/**
 * Makes a project's live rows those of a validated project file (the active deployment's
 * projection): its fields, its suites by slug and their tests by key (a Playwright test by key in
 * the project, one row whichever suites select it), so ids stay the same from one version to the
 * next. Suites and tests no longer in the file are archived (their runs are kept); rows a preview
 * created archived come back. Called inside the activating transaction, with the
 * project row locked.
 */
export async function applyDocument(
  tx: DbTx,
  project: { workspaceId: string; projectId: string },
  file: ProjectFile,
  /** Seals the secrets of webhook endpoints the file adds (`deriveKeys(secret).headers`). */
  webhookKey: Buffer | undefined,
): Promise<AppliedProject> {
  const { workspaceId, projectId } = project;
  const updated = await tx.project.update({
    where: { id: projectId },
    data: { name: file.name, baseUrl: file.baseUrl, evidence: storedEvidence(file.evidence) },
  });
  const out: AppliedProject = { projectId, slug: updated.slug, suites: [] };
  const inProject = { workspaceId, projectId };
  const kept: string[] = [];
  const suiteIds: string[] = [];
  const playwright = new Map<string, { suiteId: string; def: TestDefinition; position: number }>();
  for (const [s, suiteDef] of file.suites.entries()) {
    const suite = await tx.suite.upsert({
      where: { projectId_slug: { projectId, slug: suiteDef.slug } },
      create: { id: newId(ID_PREFIX.suite), ...inProject, slug: suiteDef.slug, name: suiteDef.name, position: s },
      update: { name: suiteDef.name, position: s, archivedAt: null },
    });
    suiteIds.push(suite.id);
    // A Playwright test is one row of the project, in the first suite that selects it.
    for (const [position, def] of suiteDef.tests.entries())
      if (isPlaywrightDefinition(def.steps) && !playwright.has(def.key))
        playwright.set(def.key, { suiteId: suite.id, def, position });
    const steps = suiteDef.tests.filter((def) => !isPlaywrightDefinition(def.steps));
    const tests = await upsertLiveTests(tx, { ...inProject, suiteId: suite.id }, steps);
    kept.push(...tests.map((t) => t.id));
    out.suites.push({ id: suite.id, slug: suite.slug, tests });
  }
  const shared = new Map(
    (await upsertLivePlaywrightTests(tx, inProject, [...playwright.values()])).map((t) => [t.key, t]),
  );
  kept.push(...[...shared.values()].map((t) => t.id));
  // Each suite's tests in its file's order, its Playwright tests (shared with other suites) among them.
  for (const [s, suiteDef] of file.suites.entries()) {
    const own = new Map(out.suites[s]?.tests.map((t) => [t.key, t]));
    const tests = suiteDef.tests.flatMap((def) => {
      const row = isPlaywrightDefinition(def.steps) ? shared.get(def.key) : own.get(def.key);
      return row ? [row] : [];
    });
    if (out.suites[s]) out.suites[s].tests = tests;
  }
  const now = new Date();
  await tx.suite.updateMany({
    where: { projectId, archivedAt: null, id: { notIn: suiteIds } },
    data: { archivedAt: now },
  });
  await tx.test.updateMany({ where: { projectId, archivedAt: null, id: { notIn: kept } }, data: { archivedAt: now } });
  // Without `webhooks` the file manages no endpoint: any it managed before are removed.
  const webhooks = await syncProjectWebhooks(tx, webhookKey, inProject, file.webhooks ?? []);
  return file.webhooks ? { ...out, webhooks } : out;
}

/** A project's evidence settings as its JSON column holds them: SQL NULL when it gives none. */
export function storedEvidence(settings: ProjectFile['evidence']) {
  return evidenceSettingsOrNull(settings) ?? Prisma.DbNull;
}
