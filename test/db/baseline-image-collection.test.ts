import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalArtifactStore, type ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { baselineKey, recordVisualFindings, storeBaselineImage, type VisualFinding } from '@testrun/core/visual';
import { purgeExpired, type RetentionDays } from '@testrun/worker';
import { collectBaselineImages } from '../../apps/worker/src/housekeeping/baseline-images';
import { applyProject } from '../../packages/admin/src/operations';
import { createTenant, insertSuiteRuns, sampleProject, testDb } from '../support/harness';

/**
 * The collection of baseline images (docs/VISUAL.md, "Storage") against real Postgres and the local
 * store: the triggers note every key a row stops referring to, and housekeeping deletes an image
 * only when no baselines, baseline_history or visual_changes row refers to it and the store has not
 * written it within the grace period (a worker that has just stored it is about to record its row).
 * Retention's purge does it after the runs, and trims the history past the run retention.
 */
const DEFAULTS: RetentionDays = { artifactDays: 30, runDays: 90 };
const DAY = 24 * 60 * 60 * 1000;
const HOUR = 60 * 60 * 1000;

const root = mkdtempSync(path.join(tmpdir(), 'testrun-images-'));
const store = new LocalArtifactStore(root);
let db: Db;

beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.$disconnect();
  rmSync(root, { recursive: true, force: true });
});

type Workspace = { workspaceId: string; deploymentId: string; runIds: string[] };

/** A workspace whose project's active deployment ran a suite run of `runs` finished runs. */
async function workspace(runs = 2): Promise<Workspace> {
  const t = await createTenant(db);
  const applied = await applyProject(db, t.workspace.id, sampleProject('shop', { count: runs }));
  const suite = applied.suites[0];
  if (!suite) throw new Error('the sample project has a suite');
  const rows = await insertSuiteRuns(db, t.workspace.id, suite.id, { baseUrl: 'http://127.0.0.1:2' });
  await db.run.updateMany({
    where: { id: { in: rows.runIds } },
    data: { deploymentId: applied.deploymentId, status: 'failed', attempt: 1, finishedAt: new Date() },
  });
  return { workspaceId: t.workspace.id, deploymentId: applied.deploymentId, runIds: rows.runIds };
}

/** An image stored as the worker stores one (by its hash), `ageMs` ago by the store's clock. */
async function image(w: Workspace, text: string, ageMs = 2 * HOUR): Promise<VisualFinding & { key: string }> {
  const body = Buffer.from(`png of ${text}`);
  const sha256 = createHash('sha256').update(body).digest('hex');
  const key = baselineKey(w.workspaceId, sha256);
  await store.put(key, body);
  age(key, ageMs);
  const finding = { name: `${text}.png`, path: `shots/${text}.png`, sha256, storageKey: key };
  return { ...finding, key, kind: 'changed', contentType: 'image/png', sizeBytes: body.length };
}

/** Sets when the store last wrote `key` to `ageMs` ago. */
function age(key: string, ageMs: number): void {
  const at = new Date(Date.now() - ageMs);
  utimesSync(path.join(root, key), at, at);
}
const exists = async (key: string) => (await store.get(key)) !== null;
const candidates = async () => (await db.baselineImageCandidate.findMany()).map((c) => c.storageKey).sort();
/** Every candidate due now: as if the grace period of their noting had passed. */
const makeDue = () => db.$executeRaw`UPDATE baseline_image_candidates SET noticed_at = now() - interval '2 hours'`;
const collect = (over: ArtifactStore = store) => collectBaselineImages({ db, store: over, graceMs: HOUR });

afterEach(async () => {
  await db.baselineImageCandidate.deleteMany();
});

it('notes the key a visual change, a baseline or a history entry stops referring to, and no other key', async () => {
  const w = await workspace();
  const [a, b, c] = [await image(w, 'a'), await image(w, 'b'), await image(w, 'c')];
  await recordVisualFindings(db, w.runIds[0] as string, [{ ...a, kind: 'new' }, b]);
  expect(await candidates()).toEqual([]);
  // A later attempt's image of the same path replaces the earlier one's.
  await recordVisualFindings(db, w.runIds[0] as string, [{ ...c, path: b.path }]);
  expect(await candidates()).toEqual([b.key]);
  await db.run.delete({ where: { id: w.runIds[0] } });
  expect(await candidates()).toEqual([a.key, b.key, c.key].sort());
  await db.baselineImageCandidate.deleteMany();
  await db.baseline.updateMany({ where: { deploymentId: w.deploymentId }, data: { storageKey: b.key } });
  expect(await candidates()).toEqual([a.key]);
  await db.baseline.updateMany({ where: { deploymentId: w.deploymentId }, data: { approvedByKeyName: 'x' } });
  expect(await candidates()).toEqual([a.key]);
  // A key outside baselines/ is no image of the collection's.
  await db.baseline.updateMany({ where: { deploymentId: w.deploymentId }, data: { storageKey: 'ws/run/a-shot.png' } });
  await db.baseline.deleteMany({ where: { deploymentId: w.deploymentId } });
  expect(await candidates()).toEqual([a.key, b.key].sort());
});

it('deletes an image no row refers to, keeps one a baseline, the history or another run still refers to', async () => {
  const w = await workspace(3);
  const [gone, baseline, history, shared] = [
    await image(w, 'gone'),
    await image(w, 'baseline'),
    await image(w, 'history'),
    await image(w, 'shared'),
  ];
  await recordVisualFindings(db, w.runIds[0] as string, [gone, { ...baseline, kind: 'new' }, history, shared]);
  await recordVisualFindings(db, w.runIds[1] as string, [{ ...shared, path: 'other/shared.png' }]);
  await db.baselineHistory.create({
    data: {
      id: newId(ID_PREFIX.baselineHistory),
      workspaceId: w.workspaceId,
      deploymentId: w.deploymentId,
      path: history.path,
      sha256: history.sha256,
      storageKey: history.key,
      status: 'approved',
      createdAt: new Date(),
    },
  });
  await db.run.delete({ where: { id: w.runIds[0] } });
  await makeDue();

  expect(await collect()).toEqual({ deleted: 1, done: true });
  expect(await exists(gone.key)).toBe(false);
  for (const kept of [baseline, history, shared]) expect(await exists(kept.key)).toBe(true);
  // Every candidate looked at is settled: deleted or referred to.
  expect(await candidates()).toEqual([]);
  expect(await collect()).toEqual({ deleted: 0, done: true });
});

it('leaves an image a worker has just stored again, its row not yet recorded, and one whose candidate is not yet due', async () => {
  const w = await workspace();
  const old = await image(w, 'again');
  await recordVisualFindings(db, w.runIds[0] as string, [old]);
  await db.run.delete({ where: { id: w.runIds[0] } });
  await makeDue();
  // A run takes the same page again: the worker stores the image (same bytes, same key) ...
  const again = await image(w, 'again', 0);
  expect(await collect()).toEqual({ deleted: 0, done: true });
  expect(await exists(again.key)).toBe(true);
  // ... and records its row: the image stays for good, the postponed candidate is forgotten once due.
  await recordVisualFindings(db, w.runIds[1] as string, [again]);
  await makeDue();
  expect(await collect()).toEqual({ deleted: 0, done: true });
  expect(await exists(again.key)).toBe(true);
  expect(await candidates()).toEqual([]);

  // A candidate noted just now waits its grace period, whatever its image's age.
  const fresh = await image(w, 'fresh');
  await recordVisualFindings(db, w.runIds[1] as string, [{ ...fresh, path: again.path }]);
  await db.run.delete({ where: { id: w.runIds[1] } });
  expect(await collect()).toEqual({ deleted: 0, done: true });
  expect(await exists(fresh.key)).toBe(true);
  await makeDue();
  age(again.key, 2 * HOUR);
  expect(await collect()).toEqual({ deleted: 2, done: true });
  expect([await exists(fresh.key), await exists(again.key)]).toEqual([false, false]);
});

it('a writer storing an image the collection is deleting waits for it, and its image is there after', async () => {
  const w = await workspace();
  const old = await image(w, 'race');
  await recordVisualFindings(db, w.runIds[0] as string, [old]);
  await db.run.delete({ where: { id: w.runIds[0] } });
  await makeDue();
  let writer: Promise<void> | undefined;
  // The store deletes while a run stores the same bytes again: the writer notes the key first, so
  // it waits for the deletion to end and stores the image after it.
  const racing: ArtifactStore = Object.assign(Object.create(store) as ArtifactStore, {
    delete: async (key: string) => {
      writer = storeBaselineImage(db, store, key, Buffer.from('png of race'));
      await new Promise((resolve) => setTimeout(resolve, 300));
      await store.delete(key);
    },
  });
  expect(await collect(racing)).toEqual({ deleted: 1, done: true });
  await writer;
  expect(await exists(old.key)).toBe(true);
  // The writer's note keeps it for the grace period, by when its row is recorded.
  expect(await candidates()).toEqual([old.key]);
  expect(await collect()).toEqual({ deleted: 0, done: true });
  expect(await exists(old.key)).toBe(true);
});

it('collects an image stored and never recorded (its writer died) once its note is due', async () => {
  const w = await workspace();
  const key = baselineKey(w.workspaceId, 'e'.repeat(64));
  await storeBaselineImage(db, store, key, Buffer.from('orphan'));
  expect(await candidates()).toEqual([key]);
  expect(await collect()).toEqual({ deleted: 0, done: true });
  await makeDue();
  age(key, 2 * HOUR);
  expect(await collect()).toEqual({ deleted: 1, done: true });
  expect(await exists(key)).toBe(false);
});

it('never deletes a key that is not a baseline image, and forgets a candidate whose image is gone', async () => {
  const w = await workspace();
  const artifact = `${w.workspaceId}/${w.runIds[0]}/art_1-shot.png`;
  await store.put(artifact, Buffer.from('a run artifact'));
  const gone = baselineKey(w.workspaceId, 'f'.repeat(64));
  for (const key of [artifact, `baselines/${w.workspaceId}/../../${artifact}`, gone])
    await db.baselineImageCandidate.create({ data: { storageKey: key, noticedAt: new Date(Date.now() - 2 * HOUR) } });
  expect(await collect()).toEqual({ deleted: 0, done: true });
  expect(await exists(artifact)).toBe(true);
  expect(await candidates()).toEqual([]);
});

it('deletes images before it forgets their candidates: a store that fails leaves them for the next pass', async () => {
  const w = await workspace();
  const lost = await image(w, 'lost');
  await recordVisualFindings(db, w.runIds[0] as string, [lost]);
  await db.run.delete({ where: { id: w.runIds[0] } });
  await makeDue();
  const failing: ArtifactStore = {
    put: (key, body) => store.put(key, body),
    open: (key, range) => store.open(key, range),
    get: (key) => store.get(key),
    deletePrefix: (prefix) => store.deletePrefix(prefix),
    modifiedAt: (key) => store.modifiedAt(key),
    delete: () => Promise.reject(new Error('the store is down')),
  };
  await expect(collect(failing)).rejects.toThrow('the store is down');
  expect(await candidates()).toEqual([lost.key]);
  expect(await collect()).toEqual({ deleted: 1, done: true });
  expect(await exists(lost.key)).toBe(false);
});

it('retention trims the history past the run retention and deletes the images of what it purged', async () => {
  const w = await workspace();
  const [unapproved, current, replaced, recent] = [
    await image(w, 'unapproved'),
    await image(w, 'current'),
    await image(w, 'replaced'),
    await image(w, 'recent'),
  ];
  await recordVisualFindings(db, w.runIds[0] as string, [unapproved, { ...current, kind: 'new' }]);
  const entry = (img: typeof replaced, replacedAgoDays: number) => ({
    id: newId(ID_PREFIX.baselineHistory),
    workspaceId: w.workspaceId,
    deploymentId: w.deploymentId,
    path: img.path,
    sha256: img.sha256,
    storageKey: img.key,
    status: 'approved',
    createdAt: new Date(Date.now() - (replacedAgoDays + 1) * DAY),
    replacedAt: new Date(Date.now() - replacedAgoDays * DAY),
  });
  await db.baselineHistory.createMany({ data: [entry(replaced, DEFAULTS.runDays + 1), entry(recent, 10)] });
  await db.run.update({ where: { id: w.runIds[0] }, data: { createdAt: new Date(Date.now() - 100 * DAY) } });

  const first = await purgeExpired({ db, store, defaults: DEFAULTS });
  expect([first.runs, first.historyEntries, first.images, first.done]).toEqual([1, 1, 0, true]);
  await makeDue();
  const second = await purgeExpired({ db, store, defaults: DEFAULTS });
  expect([second.historyEntries, second.images]).toEqual([0, 2]);
  expect(await exists(unapproved.key)).toBe(false);
  expect(await exists(replaced.key)).toBe(false);
  // The run's new image is the deployment's baseline; the recent history entry is kept.
  expect(await exists(current.key)).toBe(true);
  expect(await exists(recent.key)).toBe(true);
  expect(await db.baselineHistory.count({ where: { workspaceId: w.workspaceId } })).toBe(1);

  // A workspace's own run retention wins: a shorter one trims the recent entry too.
  await db.workspace.update({ where: { id: w.workspaceId }, data: { runRetentionDays: 5 } });
  expect((await purgeExpired({ db, store, defaults: DEFAULTS })).historyEntries).toBe(1);
});
