import { readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright';
import { keepsEvidence, recordsEvidence, type EvidenceMode, type EvidencePolicy } from '@testrun/contracts';
import { errorMessage, type Logger } from '@testrun/core/logger';
import { withTimeout } from '@testrun/core/with-timeout';
import type { ArtifactWriter } from './artifact-writer';
import type { BrowserClock } from '../browser/browser-clock';
import type { SecretMask } from './secret-mask';
import { sanitizeTrace } from './trace-sanitizer';

/** What {@link stopRecording} needs of the run whose context it closes. */
export interface RecordingTeardown {
  context: BrowserContext;
  /** The run's page, when it was opened: its video is the run's recording. */
  page: Page | null;
  /** The run's target headers: their values are cut out of the trace before it is stored. */
  headers: Readonly<Record<string, string>>;
  /** Every secret value the run used (headers and secret variables): masked in the trace. */
  mask: SecretMask;
  writer: ArtifactWriter;
  /** The run's evidence policy: which recordings were started, and which are kept. */
  evidence: EvidencePolicy;
  /** Whether the run passed: `on-failure` recordings of a passing run are dropped, never written. */
  passed: boolean;
  clock: BrowserClock;
  logger: Logger;
  /** The worker's scratch directory (see WorkerService); the trace file passes through it. */
  scratchDir: string;
  /** Longest each of stopping the trace and closing the context may take. */
  boundMs: number;
  /** Largest trace or video file kept, in bytes; a larger one is left out and the run says so. */
  maxFileBytes: number;
}

/** How long Playwright may take to name a closed page's video file. */
const VIDEO_PATH_TIMEOUT_MS = 1_000;

/**
 * Stops tracing, closes the context (which finishes the video) and hands to the writer the files the
 * run's evidence policy keeps, each step within a bound. Never throws: a recording that cannot be
 * stored is logged and left out, it never changes the run's outcome. Returns a sentence for each
 * file left out for its size, for the run's summary.
 */
export async function stopRecording(r: RecordingTeardown): Promise<string[]> {
  const { runId, attempt } = r.writer.owner;
  const scratchFiles: string[] = [];
  const notes: string[] = [];
  if (recordsEvidence(r.evidence.trace)) {
    const tracePath = path.join(r.scratchDir, `${runId}-${attempt}-trace.zip`);
    scratchFiles.push(tracePath);
    await storeTrace(r, keepsEvidence(r.evidence.trace, r.passed) ? tracePath : null, notes);
  }
  const video = r.page?.video() ?? null;
  try {
    await r.clock.time(withTimeout(r.context.close(), r.boundMs, 'closing the browser context'));
  } catch (error) {
    // A crashed browser's context may not close cleanly; the browser pool relaunches the browser.
    r.logger.debug('browser context did not close cleanly', { runId, error: r.mask.text(errorMessage(error)) });
  }
  if (video) {
    try {
      const videoPath = await r.clock.time(withTimeout(video.path(), VIDEO_PATH_TIMEOUT_MS, 'naming the video file'));
      scratchFiles.push(videoPath);
      // A video the policy does not keep is only removed, with the other scratch files.
      if (keepsEvidence(r.evidence.video, r.passed)) {
        const tooBig = await oversizeNote('video', videoPath, r.maxFileBytes);
        if (tooBig) {
          notes.push(tooBig);
          throw new Error(tooBig);
        }
        const body = await readFile(videoPath);
        if (body.length > 0) r.writer.recordRunFile('video', 'video.webm', 'video/webm', body);
      }
    } catch (error) {
      r.logger.warn('video not stored', { runId, error: r.mask.text(errorMessage(error)) });
    }
  }
  // The files were read into memory: removing them need not hold up the run's terminal write.
  void Promise.all(scratchFiles.map((file) => unlink(file).catch(() => undefined)));
  return notes;
}

/**
 * Stops the trace: into `tracePath` and on to the writer when it is kept, else without a path, so
 * that Playwright writes no file at all.
 */
async function storeTrace(r: RecordingTeardown, tracePath: string | null, notes: string[]): Promise<void> {
  const { runId } = r.writer.owner;
  try {
    const stopped = tracePath ? r.context.tracing.stop({ path: tracePath }) : r.context.tracing.stop();
    await r.clock.time(withTimeout(stopped, r.boundMs, 'stopping the trace'));
    if (!tracePath) return;
    const tooBig = await oversizeNote('trace', tracePath, r.maxFileBytes);
    if (tooBig) {
      notes.push(tooBig);
      throw new Error(tooBig);
    }
    let zip: Buffer = await readFile(tracePath);
    // Secret values must never reach storage, whatever Playwright chose to record; a password typed
    // into a page is one even when no secret variable gave it.
    zip = sanitizeTrace(zip, Object.keys(r.headers), r.mask);
    r.writer.recordRunFile('trace', 'trace.zip', 'application/zip', zip);
  } catch (error) {
    r.logger.warn('trace not stored', { runId, error: r.mask.text(errorMessage(error)) });
  }
}

/** A sentence saying the file was not kept, when it is larger than `maxBytes`; null when it fits. */
async function oversizeNote(what: 'trace' | 'video', file: string, maxBytes: number): Promise<string | null> {
  const { size } = await stat(file);
  if (size <= maxBytes) return null;
  return `The ${what} was not kept: ${formatSize(size)} is over the ${formatSize(maxBytes)} cap.`;
}

function formatSize(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.ceil(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * What a trace records. `on`: DOM snapshots around every action and the screencast (the film strip
 * of the page). `on-failure`, which most passing runs record only to throw away: the snapshots
 * alone, which show the page at every action in the trace viewer; the screencast costs the browser
 * an encoded frame per repaint (CPU, and ~10 MB of GPU-process memory per context), and the failing
 * step's screenshot is taken on its own (screenshots `on-failure`).
 */
export function traceOptions(mode: EvidenceMode): { screenshots: boolean; snapshots: boolean } {
  return { screenshots: mode === 'on', snapshots: true };
}

/**
 * Runs a step inside a group of the trace named `label` (the trace viewer's action list then shows
 * every step by the name the view gives it, whatever Playwright calls it made or hides); the group
 * ends however the step does. Without a traced context, only runs it. A group that cannot be opened
 * or closed (the context closed under a cancel) never changes the step's outcome.
 */
export async function inTraceGroup<T>(
  traced: BrowserContext | null,
  label: string,
  work: () => Promise<T>,
): Promise<T> {
  if (!traced) return work();
  const opened = await traced.tracing.group(label).then(
    () => true,
    () => false,
  );
  try {
    return await work();
  } finally {
    if (opened) await traced.tracing.groupEnd().catch(() => undefined);
  }
}
