import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import { artifactKey } from '@testrun/core/artifact-store';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { createSuiteRun, STEPS, type SeededSuite } from './seed';
import { defined, type ViewEnv } from './support';

// Visual changes recorded for a seeded suite run's runs the way the worker records them: the run
// ended (a changed snapshot fails it `screenshot_changed`), Playwright's images of each snapshot
// attached to its current attempt (`home-expected.png`, `home-actual.png`, `home-diff.png`), and
// one visual_changes row per snapshot. Written directly: the pages only read them.

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A real PNG of one colour, `width` × `height`, that a browser decodes. */
function solidPng(width: number, height: number, rgb: readonly [number, number, number]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per channel
  header[9] = 2; // truecolour
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => [...rgb]).flat())]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(pixels)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A file a snapshot's test attached, as Playwright names it. */
type SnapshotFile = { name: string; body: Buffer; contentType: string };

/** One snapshot a run found: its name and path, kind, approval, and the files attached of it. */
type SnapshotPlan = {
  name: string;
  path: string;
  kind: 'new' | 'changed';
  approved?: { by: string; at: Date };
  files: SnapshotFile[];
};

/** How a run ended, and what it found of its snapshots. */
type VisualRunPlan = { status: 'passed' | 'failed'; summary: string; snapshots: SnapshotPlan[] };

/** The project's active deployment, which the suite run's runs executed. */
async function activeDeployment(env: ViewEnv, suiteRunId: string): Promise<string> {
  const [row] = await env.db.$queryRawUnsafe<Array<{ id: string | null }>>(
    `SELECT p.active_deployment_id AS id FROM suite_runs s JOIN suites u ON u.id = s.suite_id
     JOIN projects p ON p.id = u.project_id WHERE s.id = $1`,
    suiteRunId,
  );
  return defined(row?.id, 'the active deployment');
}

/** Stores a file as an attachment of the run's current attempt (its bytes in the store, its row in Postgres). */
async function attach(env: ViewEnv, workspaceId: string, runId: string, file: SnapshotFile): Promise<void> {
  const id = newId(ID_PREFIX.artifact);
  const storageKey = artifactKey(workspaceId, runId, id, 'snapshot');
  await env.api.store.put(storageKey, file.body);
  await env.db.artifact.create({
    data: {
      id,
      runId,
      workspaceId,
      attempt: 1,
      kind: 'attachment',
      name: file.name,
      storageKey,
      contentType: file.contentType,
      sizeBytes: file.body.length,
    },
  });
}

/** Ends the run as planned, attaches its snapshots' files and records what it found. */
async function recordRun(env: ViewEnv, suite: SeededSuite, deploymentId: string, runId: string, plan: VisualRunPlan) {
  const finishedAt = new Date();
  await env.db.run.update({
    where: { id: runId },
    data: {
      status: plan.status,
      outcomeCode: plan.status === 'failed' ? 'screenshot_changed' : null,
      outcomeMessage: plan.status === 'failed' ? 'Screenshot comparison failed' : null,
      resultSummary: plan.summary,
      deploymentId,
      attempt: 1,
      startedAt: new Date(finishedAt.getTime() - 2_000),
      finishedAt,
      durationMs: 2_000,
    },
  });
  for (const snapshot of plan.snapshots) {
    for (const file of snapshot.files) await attach(env, suite.workspaceId, runId, file);
    const image = defined(snapshot.files[0], `a file of ${snapshot.name}`);
    await env.db.visualChange.create({
      data: {
        id: newId(ID_PREFIX.visualChange),
        workspaceId: suite.workspaceId,
        runId,
        deploymentId,
        name: snapshot.name,
        path: snapshot.path,
        kind: snapshot.kind,
        sha256: createHash('sha256').update(image.body).digest('hex'),
        storageKey: `${suite.workspaceId}/baselines/${snapshot.name}`,
        contentType: image.contentType,
        sizeBytes: image.body.length,
        approvedAt: snapshot.approved?.at ?? null,
        approvedByKeyName: snapshot.approved?.by ?? null,
      },
    });
  }
}

/** Ends every run of the seeded suite run as `plans` say (by position), and the suite run with them. */
export async function recordVisualRuns(env: ViewEnv, suite: SeededSuite, plans: VisualRunPlan[]): Promise<void> {
  const deploymentId = await activeDeployment(env, suite.suiteRunId);
  for (const [i, plan] of plans.entries())
    await recordRun(env, suite, deploymentId, defined(suite.runs[i], `run ${i}`).id, plan);
  const failed = plans.filter((p) => p.status === 'failed').length;
  await env.db.suiteRun.update({
    where: { id: suite.suiteRunId },
    data: {
      status: failed ? 'failed' : 'passed',
      queuedCount: 0,
      passedCount: plans.length - failed,
      failedCount: failed,
      deploymentId,
      startedAt: new Date(Date.now() - 3_000),
      finishedAt: new Date(),
    },
  });
}

/** A name that is markup: it must reach the pages as text. */
export const HOSTILE = '<img src=x onerror=alert(1)>';
export const TEXT_EXPECTED = 'Total: <b>10 EUR</b>\n';
export const TEXT_ACTUAL = 'Total: <b>12 EUR</b>\n';
export const APPROVED_AT = new Date('2026-12-07T10:04:31Z');

const png = (rgb: [number, number, number]) => solidPng(64, 36, rgb);
const image = (name: string, rgb: [number, number, number]) => ({ name, body: png(rgb), contentType: 'image/png' });
const text = (name: string, body: string) => ({ name, body: Buffer.from(body), contentType: 'text/plain' });
/** Where the fixture's snapshots' baselines are in its bundle. */
export const SNAPSHOTS = 'e2e/tests/visual.spec.ts-snapshots';

/**
 * What the suite run's five runs found: two changed snapshots (an image, a text), a new baseline, a
 * changed image of a hostile name, nothing, and a new baseline already approved.
 */
function visualPlans(): VisualRunPlan[] {
  return [
    {
      status: 'failed',
      summary: 'Failed: Screenshot comparison failed',
      snapshots: [
        {
          name: 'home.png',
          path: `${SNAPSHOTS}/home-chromium-linux.png`,
          kind: 'changed',
          files: [
            image('home-expected.png', [0, 128, 128]),
            image('home-actual.png', [220, 20, 60]),
            image('home-diff.png', [255, 0, 0]),
          ],
        },
        {
          name: 'label.txt',
          path: `${SNAPSHOTS}/label-chromium-linux.txt`,
          kind: 'changed',
          files: [text('label-expected.txt', TEXT_EXPECTED), text('label-actual.txt', TEXT_ACTUAL)],
        },
      ],
    },
    {
      status: 'passed',
      summary: 'Passed; new baselines awaiting approval: heading.png',
      snapshots: [
        {
          name: 'heading.png',
          path: `${SNAPSHOTS}/heading-chromium-linux.png`,
          kind: 'new',
          files: [image('heading-actual.png', [0, 0, 128])],
        },
      ],
    },
    {
      status: 'failed',
      summary: 'Failed: Screenshot comparison failed',
      snapshots: [
        {
          name: `${HOSTILE}.png`,
          path: `${SNAPSHOTS}/${HOSTILE}-chromium-linux.png`,
          kind: 'changed',
          files: [
            image(`${HOSTILE}-expected.png`, [0, 128, 0]),
            image(`${HOSTILE}-actual.png`, [128, 0, 0]),
            image(`${HOSTILE}-diff.png`, [255, 0, 0]),
          ],
        },
      ],
    },
    { status: 'passed', summary: 'Passed', snapshots: [] },
    {
      status: 'passed',
      summary: 'Passed',
      snapshots: [
        {
          name: 'logo.png',
          path: `${SNAPSHOTS}/logo-chromium-linux.png`,
          kind: 'new',
          approved: { by: 'ci-deploy', at: APPROVED_AT },
          files: [image('logo-expected.png', [10, 10, 10]), image('logo-actual.png', [10, 10, 10])],
        },
      ],
    },
  ];
}

/** A suite run of five step tests whose runs ended as {@link visualPlans} says, on the project's active version. */
export async function seedVisualSuite(env: ViewEnv): Promise<SeededSuite> {
  const plan = (name: string) => ({ name, steps: [STEPS.home()] });
  const suite = await createSuiteRun(
    env.db,
    env.api.keys,
    ['Home looks right', 'Heading is new', 'Hostile name', 'Footer matches', 'Logo approved'].map(plan),
    { baseUrl: env.site.url },
  );
  await recordVisualRuns(env, suite, visualPlans());
  return suite;
}
