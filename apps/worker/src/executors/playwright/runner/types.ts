import type { SandboxLimits, SandboxSpec } from '../../../sandbox';
import type { ErrorRecord, StepRecord, TestStatus } from '../inside/protocol';
import type { Isolation } from './sandboxed-cli';
import type { PlaywrightVersions } from './versions';

import type { DiscoveryResult, PlaywrightBrowser } from '@testrun/contracts';

export type { DiscoveredTest, PlaywrightBrowser } from '@testrun/contracts';

/** What discovery answers: contracts' DiscoveryResult, which the discovery job returns as it is. */
export type Discovery = DiscoveryResult;

/** One project of the team's config, as discovery lists it. */
export type DiscoveredProject = Extract<DiscoveryResult, { projects: unknown }>['projects'][number];

/** Where the bundle is and how the sandbox is bounded: what discovery and runs share. */
export interface BundleOptions {
  /** The extracted bundle on the host (read only: it is copied into the scratch directory). */
  bundleDir: string;
  /** The team's config, relative to the bundle root (e.g. e2e/playwright.config.ts). */
  configFile: string;
  /** A private, empty host directory: the sandbox's /work. */
  scratchDir: string;
  limits?: Partial<SandboxLimits>;
  signal?: AbortSignal;
  /** 'none' runs without the sandbox (PLAYWRIGHT_SANDBOX=off, docs/SANDBOX.md "Opting out"). Default 'sandbox'. */
  isolation?: Isolation;
  /** The host directory keeping the TypeScript Playwright compiled for this bundle (caches/transform-cache.ts); none: compiled afresh. */
  transformCache?: string;
  /** The worker's V8 code cache of Playwright's own modules (caches/code-cache.ts); none: compiled afresh. */
  codeCache?: string;
  /** The @playwright/test versions the worker has (versions.ts); none: the service's alone. */
  versions?: PlaywrightVersions;
}

/** A test to run: its identity as discovered. */
export interface PlaywrightTestRef {
  file: string;
  project: string;
  titlePath: string[];
  /** When given and not chromium, the test is reported skipped (browser_unavailable) without running. */
  browser?: PlaywrightBrowser;
}

export type PlaywrightEvidence = 'on' | 'off' | 'retain-on-failure';

/** What a snapshot without a baseline makes of its test (the project file's `playwright.missingBaselines`). */
export type MissingBaselines = 'pass' | 'fail';

export interface RunPlaywrightOptions extends BundleOptions {
  /**
   * A host directory only the worker writes, which the sandbox sees read only (interrupt.ts): where
   * the worker names the tests to stop. None: the tests cannot be stopped one by one.
   */
  controlDir?: string;
  /** Normally one test; several run in the same sandbox, in Playwright's order. */
  tests: PlaywrightTestRef[];
  /** The baselines the tests' snapshots compare against, placed in the bundle's copy at their paths (docs/VISUAL.md). */
  baselines?: readonly PlacedBaseline[];
  /** `fail`: a snapshot without a baseline fails its test (docs/VISUAL.md). Default 'pass'. */
  missingBaselines?: MissingBaselines;
  /** Playwright workers running them (a batch holding as many of the worker's slots). Default 1. */
  workers?: number;
  /** Passed to runSandboxed (default 'none'). */
  network?: SandboxSpec['network'];
  /** `use.proxy` of every context (e.g. `{ server: 'http://127.0.0.1:<relay port>' }`). */
  proxy?: { server: string; username?: string; password?: string; bypass?: string };
  /** Variables the test reads as process.env.NAME. */
  env?: Readonly<Record<string, string>>;
  /** `use.baseURL`; when absent, the config's. */
  baseUrl?: string;
  /** Sent to the target's origin (baseUrl's) only, from the page and from API request contexts. */
  headers?: Readonly<Record<string, string>>;
  /** Wins over the config's when defined. */
  retries?: number;
  /** Trace, video, screenshot (default 'retain-on-failure'). */
  evidence?: PlaywrightEvidence;
  /**
   * Overrides the config's `timeout` when given. The service never gives it: a Playwright test's
   * time is its config's and its own (`test.setTimeout`, `test.slow()`), as under `playwright test`.
   */
  timeoutMs?: number;
  /**
   * Called as each test ends: the requests the network policy refused since the previous call (the
   * egress proxy's reports), in order, those asked for by `until` (ms since the epoch: when the
   * runner learnt the test had ended) when given; a later one is the next test's. They are the
   * test's result's `blocked`; they make it error/target_blocked only when its failure is one of
   * them (outcome.ts, classifyAttempt).
   */
  takeBlocked?: (until?: number) => readonly RefusedRequest[];
  /** Told the key of each selected test as its first attempt begins (a batch claims its run then). */
  onBegin?: (key: string) => void;
  /**
   * Told where the sandbox's start is: `sandbox` as it is started (the bundle copied, its files
   * written), `listed` once its runner has loaded the tests and begun (its reporter's `onBegin`).
   */
  onStage?: (stage: 'sandbox' | 'listed') => void;
  /** Told each setup test's result as it ends (../record-setup.ts). */
  onSetup?: (setup: SetupTestResult) => void;
}

/** A request the network policy refused while a test ran, as the egress proxy reported it. */
export interface RefusedRequest {
  /** Host as the test asked for it (a name, or an address). */
  host: string;
  port: number;
  /** A sentence naming the host and the rule. */
  detail: string;
  /** When the request reached the proxy (ms since the epoch), when known. */
  askedAt?: number;
}

/** A step of an attempt, as the reporter in the sandbox wrote it (inside/protocol.ts). */
export type PlaywrightStep = StepRecord;

/** An error of an attempt, as the reporter in the sandbox wrote it (inside/protocol.ts). */
export type PlaywrightError = ErrorRecord;

export interface PlaywrightAttachment {
  name: string;
  contentType: string;
  /** Playwright's own, from its screenshot, video and trace options; else the test attached it on purpose. */
  automatic: boolean;
  /** A host path (under the scratch directory); none for a body the reporter did not write (over its bounds). */
  path?: string;
}

/** One attempt of a test, as the reporter in the sandbox wrote it. */
export interface PlaywrightAttempt {
  retry: number;
  status: TestStatus;
  expectedStatus: TestStatus;
  durationMs: number;
  annotations: { type: string; description?: string }[];
  errors: PlaywrightError[];
  steps: PlaywrightStep[];
  attachments: PlaywrightAttachment[];
  stdout: string;
  stderr: string;
  /** What the try found of its snapshots against the baselines placed in the bundle (snapshots.ts); none when absent. */
  snapshots?: readonly SnapshotFinding[];
}

export type PlaywrightStatus = 'passed' | 'failed' | 'error' | 'skipped';

export interface PlaywrightTestResult {
  /** {@link playwrightTestKey} of the test. */
  key: string;
  status: PlaywrightStatus;
  /** The outcome code (docs/WORKER.md, "Playwright tests: outcomes"); null when passed. */
  code: string | null;
  skipReason?: 'skipped_in_code' | 'browser_unavailable';
  summary: string;
  durationMs: number;
  steps: PlaywrightStep[];
  errors: PlaywrightError[];
  attachments: PlaywrightAttachment[];
  stdout: string;
  stderr: string;
  /** Every attempt, the last one included (retries). */
  attempts: PlaywrightAttempt[];
  /** Requests the network policy refused while it ran (its last attempt's, with the tries before it). */
  blocked: readonly RefusedRequest[];
}

/** A setup test's result (a test that ran before the selected ones, of a project they depend on). */
export interface SetupTestResult extends PlaywrightTestResult {
  /** `[project] › title path`. */
  name: string;
  ref: { file: string; line: number; column: number; project: string; titlePath: string[] };
  /** When the runner learnt it had ended (ms since the epoch). */
  endedAt: number;
}

/** A snapshot a try found new or changed: its path in the bundle and the host file of the image taken. */
export interface SnapshotFinding {
  kind: 'new' | 'changed';
  /** The snapshot's name as Playwright attaches it (`home.png`). */
  name: string;
  /** Its baseline's path relative to the bundle's root, `/`-separated. */
  path: string;
  /** The image the try took, on the host (under the scratch directory). */
  file: string;
  contentType: string;
}

/** A baseline to place: its path in the bundle and its bytes. */
export interface PlacedBaseline {
  path: string;
  body: Buffer;
}
