import type { BrowserContext, CDPSession, Dialog, Page } from 'playwright';
import { errorMessage, type Logger } from '@testrun/core/logger';
import { withTimeout } from '@testrun/core/with-timeout';
import { pageSession } from './page-devtools';

/** Limits every run's pages are held to (see WorkerConfig for the environment variables). */
export interface PageLimits {
  /** JavaScript heap one page may use, in bytes, before the run ends `resource_limit`. */
  heapBytes: number;
  /** Pages (the run's own plus popups) a run may open; one more ends it. */
  maxPages: number;
  /** Dialogs (alert, confirm, prompt, beforeunload) a run may raise; one more ends it. */
  maxDialogs: number;
}

/** Defaults of {@link PageLimits}. */
export const DEFAULT_PAGE_LIMITS: PageLimits = { heapBytes: 256 * 1024 * 1024, maxPages: 20, maxDialogs: 50 };

/** Why a run's page was stopped, in words that complete "the page …". */
export type LimitViolation = { kind: 'memory' | 'pages' | 'dialogs'; detail: string };

/** How often each page's heap is sampled. */
const HEAP_SAMPLE_MS = 100;
/** A sample that takes longer than this is skipped (a page busy in a loop answers late). */
const HEAP_SAMPLE_TIMEOUT_MS = 1_000;

const MB = 1024 * 1024;

/**
 * Watches one run's browser context and stops a page that goes past its {@link PageLimits}:
 * popups beyond the cap are closed as they open, every dialog is dismissed and counted, and each
 * page's JavaScript heap is sampled. On the first violation every page of the context is closed,
 * which ends the running step at once; the caller reads {@link violation} to name the outcome.
 * A renderer that crashes after its heap was seen past a quarter of the cap is counted as out of
 * memory (Chromium's own heap limit, four times the cap, ends a page that allocates faster than it is sampled).
 */
export class PageGuard {
  private found: LimitViolation | null = null;
  private pagesOpened = 0;
  private dialogs = 0;
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly popups: Page[] = [];
  /** The target ids of the context's pages as Chromium creates them, and the DevTools client that reports them. */
  private readonly targets = new Set<string>();
  private targetSession: CDPSession | null = null;

  constructor(
    private readonly context: BrowserContext,
    private readonly limits: PageLimits,
    private readonly logger: Logger,
  ) {}

  /** The first limit the run's pages went past, or null. */
  get violation(): LimitViolation | null {
    return this.found;
  }

  /**
   * Starts watching the run's own page, and every popup opened from then on; resolves once the
   * page's heap is sampled (its DevTools session is open) and its context's pages are counted.
   */
  async watchMain(main: Page): Promise<void> {
    this.context.on('page', (page) => {
      if (page !== main) void this.watch(page, true);
    });
    await Promise.all([this.countTargets(main), this.watch(main, false)]);
  }

  /**
   * Counts the context's pages as the browser creates them. Playwright announces a popup only once
   * its first navigation commits, so popups of a URL that never answers would go uncounted (and
   * stay open) while the step waits out its timeout; the browser's own target events come at once.
   */
  private async countTargets(main: Page): Promise<void> {
    try {
      const session = await pageSession(main);
      const { targetInfo } = await session.send('Target.getTargetInfo');
      session.on('Target.targetCreated', ({ targetInfo: created }) => {
        if (this.stopped || created.type !== 'page' || created.browserContextId !== targetInfo.browserContextId) return;
        this.targets.add(created.targetId);
        this.countPage(this.targets.size);
      });
      // The targets that exist already (the run's own page) are announced first.
      await session.send('Target.setDiscoverTargets', { discover: true });
      this.targetSession = session;
    } catch (error) {
      if (!main.isClosed()) this.logger.debug('pages not counted by the browser', { error: errorMessage(error) });
    }
  }

  /** Ends the run when `opened` pages are more than it may open. */
  private countPage(opened: number): boolean {
    if (opened <= this.limits.maxPages) return false;
    this.stopAll({
      kind: 'pages',
      detail: `opened more than ${this.limits.maxPages - 1} popups or windows`,
    });
    return true;
  }

  /** Stops sampling the pages' heaps. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** Deletes the video files of popups; call after the context was closed. */
  async discardPopupVideos(): Promise<void> {
    const videos = this.popups.flatMap((page) => {
      const video = page.video();
      return video ? [video.delete().catch(() => undefined)] : [];
    });
    await Promise.all(videos);
  }

  private async watch(page: Page, popup: boolean): Promise<void> {
    if (popup) this.popups.push(page);
    this.pagesOpened += 1;
    if (this.countPage(this.pagesOpened)) return;
    page.on('dialog', (dialog) => {
      this.onDialog(dialog);
    });
    let lastHeap = 0;
    page.once('crash', () => {
      if (lastHeap >= this.limits.heapBytes / 4) this.stopAll(this.memoryViolation(lastHeap));
    });
    await this.sampleHeap(page, (bytes) => {
      lastHeap = bytes;
    });
  }

  private onDialog(dialog: Dialog): void {
    this.dialogs += 1;
    dialog.dismiss().catch(() => undefined);
    if (this.dialogs > this.limits.maxDialogs) {
      this.stopAll({
        kind: 'dialogs',
        detail: `raised more than ${this.limits.maxDialogs} dialogs`,
      });
    }
  }

  private memoryViolation(bytes: number): LimitViolation {
    return {
      kind: 'memory',
      detail: `used more than ${Math.round(this.limits.heapBytes / MB)} MB of JavaScript memory (${Math.round(bytes / MB)} MB seen)`,
    };
  }

  private async sampleHeap(page: Page, seen: (bytes: number) => void): Promise<void> {
    let session: CDPSession;
    try {
      session = await pageSession(page);
    } catch {
      return; // The page is already gone.
    }
    const sample = async (): Promise<void> => {
      if (this.stopped || page.isClosed()) return;
      try {
        const { usedSize } = await withTimeout(
          session.send('Runtime.getHeapUsage'),
          HEAP_SAMPLE_TIMEOUT_MS,
          'sampling the page heap',
        );
        seen(usedSize);
        if (usedSize > this.limits.heapBytes) {
          this.stopAll(this.memoryViolation(usedSize));
          return;
        }
      } catch (error) {
        if (page.isClosed()) return;
        this.logger.debug('page heap not sampled', { error: errorMessage(error) });
      }
      this.later(sample);
    };
    await sample();
  }

  private later(fn: () => Promise<void>): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void fn();
    }, HEAP_SAMPLE_MS);
    this.timers.add(timer);
  }

  /** Records the first violation and closes every page, which ends the step that is running. */
  private stopAll(violation: LimitViolation): void {
    if (this.found) return;
    this.found = violation;
    this.stop();
    for (const page of this.context.pages()) page.close().catch(() => undefined);
    // Popups Playwright has not announced yet (still loading) are closed by the browser directly.
    for (const targetId of this.targets)
      this.targetSession?.send('Target.closeTarget', { targetId }).catch(() => undefined);
  }
}
