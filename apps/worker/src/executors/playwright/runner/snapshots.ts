// What a Playwright test's try found of its snapshots (`toHaveScreenshot`, `toMatchSnapshot`) against
// the baselines placed in its bundle (docs/VISUAL.md): a snapshot without a baseline, which
// Playwright writes at its path and reports `A snapshot doesn't exist at <path>, writing actual.`
// (every version since 1.39), and a snapshot that differs, which it attaches as `<name>-expected`
// (the baseline, at its path in the bundle) beside `<name>-actual` (the image taken, in the output
// folder). Everything here came from the sandbox: messages, names and paths. A path is kept only
// when it lies within the bundle; the files are read later, through no link (store-visual.ts).
import path from 'node:path';
import { stripAnsi } from './strip-ansi';
import type { PlaywrightAttachment, PlaywrightAttempt, PlaywrightError, SnapshotFinding } from './types';

/** Playwright's message of a snapshot it found no baseline of, and wrote. */
const MISSING = /^(?:Error: )?A snapshot doesn't exist at (.+), writing actual\.\s*$/m;

/** At most this many findings of one try are kept. */
const MAX_FINDINGS = 100;
/** The longest snapshot path kept, in characters. */
const MAX_PATH = 1_024;

/** The path of the snapshot an error says Playwright found no baseline of (as the runner saw it), or null. */
export function missingSnapshotPath(message: string): string | null {
  const first = stripAnsi(message).split('\n')[0] ?? '';
  return MISSING.exec(first)?.[1] ?? null;
}

/** Whether an error is Playwright's report of a snapshot it found no baseline of. */
function isMissingSnapshot(error: Pick<PlaywrightError, 'message'>): boolean {
  return missingSnapshotPath(error.message) !== null;
}

/**
 * The extensions of the snapshots the service keeps: images and text, never a file Node or
 * Playwright would load as code or configuration (a baseline placed at `helpers.ts`, `x.json` or in
 * `node_modules` would carry one deployment's test code into the runs of another).
 */
const SNAPSHOT_EXTENSIONS = new Set(['.png', '.jpg', '.jpeg', '.txt']);

/**
 * A host path as a snapshot's path in the bundle: relative to `bundleDir`, within it, without `..`,
 * NUL or line breaks, at most {@link MAX_PATH} characters, of a snapshot's extension and not under
 * `node_modules`; null otherwise.
 */
export function pathInBundle(bundleDir: string, file: string): string | null {
  const rel = path.relative(bundleDir, path.resolve(bundleDir, file));
  if (rel === '' || path.isAbsolute(rel) || rel.length > MAX_PATH) return null;
  const parts = rel.split(path.sep);
  if (parts.some((part) => part === '..' || part === '' || part === 'node_modules') || /[\0\r\n]/.test(rel))
    return null;
  if (!SNAPSHOT_EXTENSIONS.has(path.extname(rel).toLowerCase())) return null;
  return parts.join('/');
}

/** The name without its `-expected`/`-actual` suffix (`home-actual.png` → `home.png`), or null. */
function baseName(name: string, suffix: 'expected' | 'actual'): string | null {
  const match = new RegExp(`^(.*)-${suffix}(\\.[^./]*)?$`).exec(name);
  return match ? `${match[1] ?? ''}${match[2] ?? ''}` : null;
}

/** The media type of a snapshot by its extension (the test's own type is not trusted). */
function snapshotType(file: string): string {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.png') return 'image/png';
  if (ext === '.jpeg' || ext === '.jpg') return 'image/jpeg';
  if (ext === '.txt') return 'text/plain';
  return 'application/octet-stream';
}

/**
 * What a try found: a `new` snapshot per error of a missing one whose path lies in the bundle (the
 * file Playwright wrote there), a `changed` one per `-expected` attachment at a path in the bundle
 * with its `-actual` beside it. `toHost` maps a path as the runner saw it to the host's.
 */
export function snapshotFindings(
  attempt: { errors: readonly Pick<PlaywrightError, 'message'>[]; attachments: readonly PlaywrightAttachment[] },
  bundleDir: string,
  toHost: (inside: string) => string,
): SnapshotFinding[] {
  const found = new Map<string, SnapshotFinding>();
  const add = (finding: SnapshotFinding) => {
    if (found.size < MAX_FINDINGS && !found.has(finding.path)) found.set(finding.path, finding);
  };
  for (const error of attempt.errors) {
    const inside = missingSnapshotPath(error.message);
    const file = inside === null ? null : toHost(inside);
    const at = file === null ? null : pathInBundle(bundleDir, file);
    if (file === null || at === null) continue;
    const attached = attempt.attachments.find((a) => a.path === file && baseName(a.name, 'expected') !== null);
    const name = (attached && baseName(attached.name, 'expected')) ?? path.posix.basename(at);
    add({ kind: 'new', name, path: at, file, contentType: snapshotType(file) });
  }
  for (const expected of attempt.attachments) {
    const name = baseName(expected.name, 'expected');
    const at = expected.path === undefined ? null : pathInBundle(bundleDir, expected.path);
    if (name === null || at === null || found.has(at)) continue;
    const actual = attempt.attachments.find((a) => a.path !== undefined && baseName(a.name, 'actual') === name);
    if (actual?.path === undefined) continue;
    add({ kind: 'changed', name, path: at, file: actual.path, contentType: snapshotType(at) });
  }
  return [...found.values()];
}

/**
 * The snapshots a test's tries found, to keep: its last try's, and each snapshot an earlier try
 * found no baseline of and wrote, unless the last found it too. Playwright before 1.42 retries a
 * try that wrote a missing snapshot, and the retry compares against the image it wrote (as under
 * `playwright test`): that image is kept all the same, awaiting approval. From 1.42 on, Playwright
 * retries no such test (collect.ts, finishRest).
 */
export function keptSnapshots(tries: readonly Pick<PlaywrightAttempt, 'snapshots'>[]): SnapshotFinding[] {
  const last = [...(tries.at(-1)?.snapshots ?? [])];
  const seen = new Set(last.map((s) => s.path));
  for (const earlier of tries.slice(0, -1))
    for (const found of earlier.snapshots ?? [])
      if (found.kind === 'new' && !seen.has(found.path) && last.length < MAX_FINDINGS) {
        seen.add(found.path);
        last.push(found);
      }
  return last;
}

/** An error of a snapshot matcher that compared (`expect(page).toHaveScreenshot(expected) failed`, before 1.50 `Screenshot comparison failed:`). */
const SNAPSHOT_MATCHER =
  /^(Error: )?(expect\(.*?\)\.(toHaveScreenshot|toMatchSnapshot)\(|(Screenshot|Snapshot) comparison failed)/;

/**
 * Whether a failed try failed on a snapshot that differs from its baseline: its first error is a
 * snapshot matcher's, and the try attached a baseline from the bundle beside the image it took
 * (snapshots.ts). A page that never held still, with no baseline to compare, is not a change.
 */
export function changedSnapshot(attempt: Pick<PlaywrightAttempt, 'status' | 'errors' | 'snapshots'>): boolean {
  const message = stripAnsi(attempt.errors[0]?.message ?? '').trim();
  return SNAPSHOT_MATCHER.test(message) && (attempt.snapshots ?? []).some((s) => s.kind === 'changed');
}

/**
 * The snapshots of a failed try whose every error is a snapshot Playwright found no baseline of and
 * wrote (docs/VISUAL.md: the first image becomes the baseline, awaiting approval, and the test
 * passes); null when any error is something else, or no such snapshot lies in the bundle.
 */
export function onlyNewBaselines(attempt: Pick<PlaywrightAttempt, 'status' | 'errors' | 'snapshots'>): string[] | null {
  if (attempt.status !== 'failed' || attempt.errors.length === 0 || !attempt.errors.every(isMissingSnapshot))
    return null;
  const fresh = (attempt.snapshots ?? []).filter((s) => s.kind === 'new').map((s) => s.name);
  return fresh.length > 0 ? fresh : null;
}

/** `home.png, heading.png and 3 more`. */
function listNames(names: readonly string[]): string {
  return names.slice(0, 5).join(', ') + (names.length > 5 ? ` and ${names.length - 5} more` : '');
}

/** The summary of a test that passed but for snapshots without a baseline, now awaiting approval. */
export function newBaselinesSummary(names: readonly string[]): string {
  return `Passed; new baseline${names.length === 1 ? '' : 's'} awaiting approval: ${listNames(names)}`;
}

/** The summary of a test failed on snapshots without a baseline (`missingBaselines: fail`): kept, awaiting approval. */
export function missingBaselinesSummary(names: readonly string[]): string {
  const one = names.length === 1;
  return `No baseline yet (missingBaselines: fail) of ${listNames(names)}: the image${one ? ' is' : 's are'} kept as new baseline${one ? '' : 's'} awaiting approval; approve to compare against ${one ? 'it' : 'them'}`;
}
