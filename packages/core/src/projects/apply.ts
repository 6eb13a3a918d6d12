import { evidenceSettingsOrNull, type ProjectFile } from '@testrun/contracts';
import { Prisma, type DbTx } from '../db';
import { ID_PREFIX, newId } from '../ids';
import { upsertLiveTests } from './test-rows';
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
 * projection): its fields, its suites by slug and their tests by key, so ids stay the same from one
 * version to the next. Suites and tests no longer in the file are archived (their runs are kept);
 * rows a preview created archived come back. Called inside the activating transaction, with the
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
  const keptSuites: string[] = [];
  for (const [s, suiteDef] of file.suites.entries()) {
    const suite = await tx.suite.upsert({
      where: { projectId_slug: { projectId, slug: suiteDef.slug } },
      create: { id: newId(ID_PREFIX.suite), ...inProject, slug: suiteDef.slug, name: suiteDef.name, position: s },
      update: { name: suiteDef.name, position: s, archivedAt: null },
    });
    keptSuites.push(suite.id);
    const tests = await upsertLiveTests(tx, { ...inProject, suiteId: suite.id }, suiteDef.tests);
    await tx.test.updateMany({
      where: { suiteId: suite.id, archivedAt: null, key: { notIn: suiteDef.tests.map((x) => x.key) } },
      data: { archivedAt: new Date() },
    });
    out.suites.push({ id: suite.id, slug: suite.slug, tests });
  }
  const now = new Date();
  await tx.suite.updateMany({
    where: { projectId, archivedAt: null, id: { notIn: keptSuites } },
    data: { archivedAt: now },
  });
  await tx.test.updateMany({
    where: { projectId, archivedAt: null, suiteId: { notIn: keptSuites } },
    data: { archivedAt: now },
  });
  // Without `webhooks` the file manages no endpoint: any it managed before are removed.
  const webhooks = await syncProjectWebhooks(tx, webhookKey, inProject, file.webhooks ?? []);
  return file.webhooks ? { ...out, webhooks } : out;
}

/** A project's evidence settings as its JSON column holds them: SQL NULL when it gives none. */
export function storedEvidence(settings: ProjectFile['evidence']) {
  return evidenceSettingsOrNull(settings) ?? Prisma.DbNull;
}
