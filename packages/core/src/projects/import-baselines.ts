import { createHash } from 'node:crypto';
import path from 'node:path';
import {
  BASELINE_IMPORT_LIMITS,
  BUNDLE_LIMITS,
  isSnapshotFile,
  type BaselineImportLimits,
  type ProblemFieldError,
} from '@testrun/contracts';
import type { ArtifactStore } from '../artifact-store';
import { openBundle } from '../bundles/store';
import { walkBundle, type BundleContent, type BundleEntry } from '../bundles/walk';
import type { Db } from '../db';
import { baselineKey, type ImportedBaseline } from '../visual/baselines';
import { storeBaselineImage } from '../visual/image-collection';
import { matchesBundleGlob, playwrightSection, type Expanded, type ExpandedFile } from './playwright';

// A deployment's committed baselines (`playwright.importBaselines`, docs/VISUAL.md "Importing
// committed baselines"), read by the API from the stored bundle, never from a file system: the
// bundle's entries are regular files and folders at relative paths without `..` (bundles/walk.ts
// refuses links, devices and climbing paths), so what is read is the bundle's own bytes. A file is
// imported when it is a snapshot's (.png, .jpg, .jpeg, .txt, not under node_modules) in the
// `-snapshots` folder of a discovered test's file, or matched by a glob of the option; past
// BASELINE_IMPORT_LIMITS the deploy is refused, and nothing is stored until the bundle is within them.

/** Which bundle files the option imports: the `-snapshots` folders of the test files, and the globs. */
type BaselineSelection = { importBaselines: boolean | readonly string[]; testFiles: ReadonlySet<string> };

/** Whether the option imports the bundle's file `file`. */
function selected(file: string, selection: BaselineSelection): boolean {
  if (selection.importBaselines === false || !isSnapshotFile(file)) return false;
  const folder = /^(.*)-snapshots\//.exec(file);
  for (let at = folder; at; at = /^(.*)-snapshots\//.exec(at[1] ?? ''))
    if (selection.testFiles.has(at[1] ?? '')) return true;
  const globs: readonly string[] = selection.importBaselines === true ? [] : selection.importBaselines;
  return globs.some((glob) => matchesBundleGlob(file, glob));
}

/** The media type of a snapshot by its extension. */
function contentTypeOf(file: string): string {
  const ext = path.posix.extname(file).toLowerCase();
  return ext === '.png' ? 'image/png' : ext === '.txt' ? 'text/plain' : 'image/jpeg';
}

/** Runs `onEntry` on each of the bundle's files the selection imports (the bundle held to its caps again). */
async function walkSelected(
  store: ArtifactStore,
  workspaceId: string,
  digest: string,
  selection: BaselineSelection,
  onEntry: (entry: BundleEntry, content: BundleContent) => Promise<void> | void,
): Promise<void> {
  const opened = await openBundle(store, workspaceId, digest);
  if (!opened) throw new Error(`bundle ${digest} of workspace ${workspaceId} is not stored`);
  const caps = { maxUnpackedBytes: BUNDLE_LIMITS.maxUnpackedBytes, maxFiles: BUNDLE_LIMITS.maxFiles };
  await walkBundle(opened.stream, caps, async (entry, content) => {
    if (!entry.folder && selected(entry.path, selection)) await onEntry(entry, content);
  });
}

const ERROR_PATH = '/playwright/importBaselines';

/** The errors of the selected files' sizes (as their headers give them) against the caps; none when within. */
async function capErrors(
  store: ArtifactStore,
  workspaceId: string,
  digest: string,
  selection: BaselineSelection,
  limits: BaselineImportLimits,
): Promise<ProblemFieldError[]> {
  const errors: ProblemFieldError[] = [];
  let files = 0;
  let bytes = 0;
  await walkSelected(store, workspaceId, digest, selection, (entry) => {
    files += 1;
    bytes += entry.size;
    if (entry.size > limits.maxFileBytes && errors.length < 10)
      errors.push({
        path: ERROR_PATH,
        message: `imports ${JSON.stringify(entry.path)}, ${entry.size} bytes, over the cap for one baseline (limit BASELINE_IMPORT_LIMITS.maxFileBytes = ${limits.maxFileBytes})`,
      });
  });
  if (files > limits.maxFiles)
    errors.push({
      path: ERROR_PATH,
      message: `imports ${files} snapshot files, more than a sandbox is given (limit BASELINE_IMPORT_LIMITS.maxFiles = ${limits.maxFiles})`,
    });
  if (bytes > limits.maxBytes)
    errors.push({
      path: ERROR_PATH,
      message: `imports ${bytes} bytes of snapshots, more than a sandbox is given (limit BASELINE_IMPORT_LIMITS.maxBytes = ${limits.maxBytes})`,
    });
  return errors;
}

/** A name Playwright's default template gives a snapshot of another platform (`home-chromium-darwin.png`, `…/win32/…`). */
const OTHER_PLATFORM = /(?:-(?:darwin|win32)\.[^./]+$|(?:^|\/)(?:darwin|win32)\/)/;

/** The warning of imported baselines made for another platform, which Playwright here never looks up; null when none is. */
export function platformWarning(paths: readonly string[]): string | null {
  const others = paths.filter((p) => OTHER_PLATFORM.test(p));
  if (others.length === 0) return null;
  const count = others.length === 1 ? '1 imported baseline is' : `${others.length} imported baselines are`;
  return `playwright.importBaselines: ${count} named for another platform (${others[0] ?? ''}${others.length > 1 ? ', …' : ''}): the service runs Playwright on linux, which looks up linux names only, so the first run here makes linux baselines of those snapshots (awaiting approval) and never compares against these`;
}

/**
 * Reads the committed baselines `selection` names from the workspace's stored bundle `digest` and
 * stores each image once under its SHA-256 (`baselines/<workspace>/<sha256>`, noted for the
 * collection first: a deploy refused afterwards leaves no image that nothing leads to); or the errors of a
 * bundle past the caps, with nothing stored. `warnings` has the platform warning, when one applies.
 */
export async function importBaselines(
  { db, store }: { db: Db; store: ArtifactStore },
  workspaceId: string,
  digest: string,
  selection: BaselineSelection,
  limits: BaselineImportLimits = BASELINE_IMPORT_LIMITS,
): Promise<{ baselines: ImportedBaseline[]; warnings: string[] } | { errors: ProblemFieldError[] }> {
  if (selection.importBaselines === false) return { baselines: [], warnings: [] };
  const errors = await capErrors(store, workspaceId, digest, selection, limits);
  if (errors.length > 0) return { errors };
  const baselines: ImportedBaseline[] = [];
  const stored = new Set<string>();
  await walkSelected(store, workspaceId, digest, selection, async (entry, content) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of content) {
      size += chunk.length;
      // The header said it was within the cap; a body longer than its header is no tar's.
      if (size > limits.maxFileBytes) throw new Error(`${entry.path} is longer than its header says`);
      chunks.push(Buffer.from(chunk));
    }
    const body = Buffer.concat(chunks);
    const sha256 = createHash('sha256').update(body).digest('hex');
    const storageKey = baselineKey(workspaceId, sha256);
    if (!stored.has(sha256)) await storeBaselineImage(db, store, storageKey, body);
    stored.add(sha256);
    baselines.push({ path: entry.path, sha256, storageKey, contentType: contentTypeOf(entry.path), sizeBytes: size });
  });
  const warning = platformWarning(baselines.map((b) => b.path));
  return { baselines, warnings: warning === null ? [] : [warning] };
}

/**
 * The expanded file with the baselines its `playwright.importBaselines` imports from its bundle (the
 * `-snapshots` folders of the discovered tests' files, `tests`), and their warning; or the errors
 * of a bundle past the caps. Unchanged without the option.
 */
export async function withImportedBaselines(
  io: { db: Db; store: ArtifactStore },
  workspaceId: string,
  expanded: ExpandedFile,
  tests: readonly { file: string }[],
): Promise<Expanded> {
  const option = playwrightSection(expanded.file)?.importBaselines ?? false;
  if (option === false || expanded.bundle === null) return expanded;
  const selection = { importBaselines: option, testFiles: new Set(tests.map((t) => t.file)) };
  const made = await importBaselines(io, workspaceId, expanded.bundle, selection);
  if ('errors' in made) return made;
  return { ...expanded, baselines: made.baselines, warnings: [...expanded.warnings, ...made.warnings] };
}
