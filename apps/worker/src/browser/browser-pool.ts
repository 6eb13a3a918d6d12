import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Browser, BrowserContext, BrowserContextOptions, CDPSession } from 'playwright';
import { withTimeout } from '@testrun/core/with-timeout';
import { makeScratchDir } from '../support/scratch-dir';
import { browserEnv } from './browser-env';
import { chooseExecutablePath, chromiumDriver, DEFAULT_CHROMIUM_PATH, DEFAULT_HEADLESS_SHELL_PATH } from './executable';

/**
 * Chromium features Playwright's launch turns off (its `--disable-features`, as of the Playwright
 * version in the lockfile). Chromium keeps only the last `--disable-features` of a command line, so
 * the worker's own switch must name these again; browser-pool.test.ts fails when Playwright's list
 * grows and this copy was not brought up to date.
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

/**
 * Features the worker turns off on top of Playwright's: the omnibox popups, which Chromium loads as
 * web pages of their own (a renderer process of 30–45 MB) for every browser context, although a
 * headless run never shows an address bar.
 */
const WORKER_DISABLED_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'];

/** Flags Chromium needs here wherever it runs (the worker's browser, a Playwright run's in the sandbox). */
export const CHROMIUM_BASE_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Flags every launch of the worker's browser gets: no sandbox (containers run as root), nothing that phones home or races
 * the tests, and no per-context browser UI pages. None of them weakens the isolation of one
 * context's pages from another's (each site still gets renderer processes of its own).
 */
export const CHROMIUM_ARGS: readonly string[] = [
  ...CHROMIUM_BASE_ARGS,
  '--disable-quic',
  `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...WORKER_DISABLED_FEATURES].join(',')}`,
];

/**
 * Every feature the worker's `--disable-features` names, Playwright's and the worker's own: a
 * Playwright run's browser in the sandbox gets them too, with the team's own added
 * (wrapper-config.ts), or each of its browser contexts pays for an omnibox renderer.
 */
export const CHROMIUM_DISABLED_FEATURES: readonly string[] = [
  ...PLAYWRIGHT_DISABLED_FEATURES,
  ...WORKER_DISABLED_FEATURES,
];

/** Options of {@link BrowserPool}. */
export interface BrowserPoolOptions {
  /**
   * Chromium to run when Playwright's own browser is not installed (`CHROMIUM_PATH`).
   * Default `/usr/bin/chromium`.
   */
  executablePath?: string;
  /**
   * Chromium's headless shell, run instead of `executablePath` for a headless launch when it exists
   * (`CHROMIUM_HEADLESS_SHELL_PATH`); null for none. Default `/usr/lib/chromium/chromium-headless-shell`.
   */
  headlessShellPath?: string | null;
  /** Run without a window. Default `true`. */
  headless?: boolean;
  /** How long one launch may take before it fails. Default 30000 ms. */
  launchTimeoutMs?: number;
  /** Flags added after {@link CHROMIUM_ARGS}. Default none. */
  extraArgs?: readonly string[];
  /**
   * The executable Playwright starts in place of the chosen Chromium: a launcher that runs it in
   * a network namespace of its own (network/browser-netns.ts). Default: Chromium itself.
   */
  wrapExecutable?: (executablePath: string) => string;
  /**
   * Told about launches and losses of the browser, for the caller's logger. Default: nobody.
   * Never given anything secret.
   */
  onEvent?: (event: BrowserPoolEvent) => void;
}

export type BrowserPoolEvent =
  | { type: 'launched'; executablePath: string; durationMs: number; launchCount: number }
  | { type: 'disconnected'; expected: boolean };

/**
 * Owns the one warm Chromium of a worker process. It is launched on first use, shared by every run
 * (each gets its own context, which isolates cookies, storage and headers), and launched again
 * transparently when it crashed or was closed underneath.
 */
export class BrowserPool {
  private readonly options: Required<Omit<BrowserPoolOptions, 'onEvent' | 'wrapExecutable'>> &
    Pick<BrowserPoolOptions, 'onEvent' | 'wrapExecutable'>;
  private current: Browser | null = null;
  private launching: Promise<Browser> | null = null;
  private closing = false;
  private launches = 0;
  private contexts = 0;
  /** The DevTools session {@link answers} asks through, one per browser. */
  private probe: Promise<CDPSession> | null = null;
  /** The browser's home and temporary directory (see browserEnv), made at the first launch. */
  private home: Promise<string> | null = null;

  constructor(options: BrowserPoolOptions = {}) {
    this.options = {
      executablePath: options.executablePath ?? DEFAULT_CHROMIUM_PATH,
      headlessShellPath:
        options.headlessShellPath === undefined ? DEFAULT_HEADLESS_SHELL_PATH : options.headlessShellPath,
      headless: options.headless ?? true,
      launchTimeoutMs: options.launchTimeoutMs ?? 30_000,
      extraArgs: options.extraArgs ?? [],
      onEvent: options.onEvent,
      wrapExecutable: options.wrapExecutable,
    };
  }

  /** How many times a browser was launched: 1 while the first one lives. */
  get launchCount(): number {
    return this.launches;
  }

  /** Browser contexts open right now (runs under way, each with its own). */
  get openContexts(): number {
    return this.contexts;
  }

  /**
   * Whether the browser answers a DevTools call (`Browser.getVersion`) within `timeoutMs`: false
   * only for a browser that is connected but hung. A launch under way, or a browser that is gone
   * and will be launched again for the next run, is not a hung worker: that counts as answering.
   */
  async answers(timeoutMs: number): Promise<boolean> {
    const browser = this.current;
    if (this.launching || !browser?.isConnected()) return !this.closing;
    try {
      this.probe ??= browser.newBrowserCDPSession();
      const session = await withTimeout(this.probe, timeoutMs, 'opening a DevTools session');
      await withTimeout(session.send('Browser.getVersion'), timeoutMs, 'Browser.getVersion');
      return true;
    } catch {
      // A session that failed to open is not kept: the next probe opens a fresh one.
      this.probe = null;
      // Gone meanwhile: not a hang (the next run relaunches it).
      return !browser.isConnected() && !this.closing;
    }
  }

  /** The executable the next launch will use. */
  resolveExecutablePath(): Promise<string> {
    const { executablePath, headless, headlessShellPath } = this.options;
    return chooseExecutablePath(executablePath, headless ? headlessShellPath : null);
  }

  /** The live browser, launched now if there is none. Concurrent callers share one launch. */
  async getBrowser(): Promise<Browser> {
    if (this.closing) throw new Error('BrowserPool is closed');
    if (this.current?.isConnected()) return this.current;
    this.launching ??= this.launch().finally(() => {
      this.launching = null;
    });
    return this.launching;
  }

  /**
   * A fresh, isolated context on the warm browser. The caller closes it (in `finally`). If the
   * browser died since the last call, it is relaunched once for this call.
   */
  async newContext(options: BrowserContextOptions = {}): Promise<BrowserContext> {
    const browser = await this.getBrowser();
    let context: BrowserContext;
    try {
      context = await browser.newContext(options);
    } catch (error) {
      // It died between the check and the call: one fresh browser, then give up.
      if (browser.isConnected() || this.closing) throw error;
      const fresh = await this.getBrowser();
      context = await fresh.newContext(options);
    }
    this.contexts += 1;
    // Also emitted when the browser goes away under the context.
    context.once('close', () => {
      this.contexts -= 1;
    });
    return context;
  }

  /** Closes the browser (and with it every context). The pool cannot be used afterwards. */
  async close(): Promise<void> {
    this.closing = true;
    const pending = this.launching;
    if (pending) await pending.catch(() => undefined);
    const browser = this.current;
    this.current = null;
    if (browser?.isConnected()) await browser.close().catch(() => undefined);
    const home = await this.home?.catch(() => undefined);
    if (home !== undefined) await rm(home, { recursive: true, force: true });
  }

  private async launch(): Promise<Browser> {
    const executablePath = await this.resolveExecutablePath();
    if (!existsSync(executablePath)) {
      throw new Error(
        `Chromium not found at ${executablePath}: install Playwright's browser (npx playwright install chromium) ` +
          'or set CHROMIUM_PATH to a Chromium executable',
      );
    }
    const began = Date.now();
    // Named like a scratch directory: the next worker removes it if this one is killed.
    this.home ??= makeScratchDir();
    const home = await this.home;
    const browser = await (
      await chromiumDriver()
    ).launch({
      executablePath: this.options.wrapExecutable?.(executablePath) ?? executablePath,
      headless: this.options.headless,
      // Never the worker's environment, with its secrets: see browserEnv.
      env: browserEnv(home, this.options.headless),
      args: [...CHROMIUM_ARGS, ...this.options.extraArgs],
      timeout: this.options.launchTimeoutMs,
      // The worker process drains on SIGTERM/SIGINT and closes the browser itself once in-flight
      // runs are done; Playwright's own handlers would kill it under those runs.
      handleSIGTERM: false,
      handleSIGINT: false,
      handleSIGHUP: false,
    });
    browser.on('disconnected', () => {
      if (this.current === browser) {
        this.current = null;
        this.probe = null;
      }
      this.options.onEvent?.({ type: 'disconnected', expected: this.closing });
    });
    if (this.closing) {
      // close() was called while this launch was under way: do not leave an orphan behind.
      await browser.close().catch(() => undefined);
      throw new Error('BrowserPool is closed');
    }
    this.current = browser;
    this.launches += 1;
    this.options.onEvent?.({
      type: 'launched',
      executablePath,
      durationMs: Date.now() - began,
      launchCount: this.launches,
    });
    return browser;
  }
}
