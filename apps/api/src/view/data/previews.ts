import { attachmentClass } from '@testrun/contracts';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import type { ViewArtifact, ViewRun, ViewSetupTest } from '../model';

// The heads of a run's text attachments, read from the artifact store for its page: a page shows
// what the test attached as text, as Playwright's HTML report does, without a click.

/** Bytes of a text attachment shown on its run's page. */
const PREVIEW_BYTES = 16 * 1024;
/** Text attachments read for one page (each attempt's); the others are downloads only. */
const MAX_PREVIEWS = 20;

async function readHead(store: ArtifactStore, storageKey: string, size: number): Promise<Buffer | null> {
  if (size === 0) return Buffer.alloc(0);
  const opened = await store.open(storageKey, { start: 0, end: Math.min(size, PREVIEW_BYTES) - 1 });
  if (!opened) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of opened.stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/**
 * Sets `previews` on the setup tests whose shown execution attached text, the first MAX_PREVIEWS of
 * their files. `setups` are of one suite run (or run), read with it: their files' keys are its own.
 */
export async function withSetupPreviews(db: Db, store: ArtifactStore, setups: readonly ViewSetupTest[] = []) {
  const texts = setups
    .flatMap((setup) => (setup.artifacts ?? []).map((a) => ({ setup, a })))
    .filter(({ a }) => a.kind === 'attachment' && attachmentClass(a.content_type) === 'text')
    .slice(0, MAX_PREVIEWS);
  if (texts.length === 0) return;
  const rows = await db.setupArtifact.findMany({
    where: { id: { in: texts.map(({ a }) => a.id) }, setupResultId: { in: setups.map((s) => s.id) } },
    select: { id: true, storageKey: true },
  });
  const keys = new Map(rows.map((row) => [row.id, row.storageKey]));
  await Promise.all(
    texts.map(async ({ setup, a }) => {
      const key = keys.get(a.id);
      const head = key ? await readHead(store, key, a.size_bytes) : null;
      if (!head) return;
      setup.previews ??= new Map();
      setup.previews.set(a.id, { text: head.toString('utf8'), truncated: a.size_bytes > head.length });
    }),
  );
}

/**
 * Sets `preview` on the text attachments of the run and of its earlier attempts, the first
 * MAX_PREVIEWS of them, and the previews of its setup tests (a run outside a suite run).
 */
export async function withPreviews(db: Db, store: ArtifactStore, run: ViewRun): Promise<ViewRun> {
  await withSetupPreviews(db, store, run.setupTests);
  const all = [run, ...(run.earlierAttempts ?? [])].flatMap((r) => r.artifacts ?? []);
  const texts = all
    .filter((a: ViewArtifact) => a.kind === 'attachment' && attachmentClass(a.contentType) === 'text')
    .slice(0, MAX_PREVIEWS);
  if (texts.length === 0) return run;
  const rows = await db.artifact.findMany({
    where: { runId: run.id, id: { in: texts.map((a) => a.id) } },
    select: { id: true, storageKey: true },
  });
  const keys = new Map(rows.map((row) => [row.id, row.storageKey]));
  await Promise.all(
    texts.map(async (a) => {
      const key = keys.get(a.id);
      const head = key ? await readHead(store, key, a.sizeBytes) : null;
      if (!head) return;
      // A cut in the middle of a character shows as one replacement character.
      a.preview = { text: head.toString('utf8'), truncated: a.sizeBytes > head.length };
    }),
  );
  return run;
}
