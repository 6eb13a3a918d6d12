import type { ArtifactKind, PageEvent, RunStatus, StepOutcome, SuiteCounts, TestLocation } from '@testrun/contracts';
import type { SetupTestWithSteps } from '@testrun/core/runs';
import type { ViewSubject } from '@testrun/core/secrets';

/** Signs the view's links on a page with the terms of the link the page was opened with. */
export type LinkSigner = (subject: ViewSubject, id: string) => string;

/** One executed step of a run's latest attempt. */
export type ViewStep = {
  index: number;
  /** The step-language action, or a Playwright step's category (test.step, expect, pw:api, hook, fixture). */
  action: string;
  /** Depth of a Playwright step in its test's step tree (0 for step-language steps). */
  depth: number;
  /** A Playwright step's source location (`file:line`). */
  location: string | null;
  label: string;
  target: string;
  outcome: StepOutcome;
  error: string | null;
  startedAt: Date;
  durationMs: number;
  screenshotId: string | null;
  /** For a failed expectation: what it wanted and what the page had. */
  expected: string | null;
  received: string | null;
  /** The page when the step went wrong. */
  pageUrl: string | null;
  pageTitle: string | null;
};

export type ViewArtifact = {
  id: string;
  kind: ArtifactKind;
  stepIndex: number | null;
  name: string;
  contentType: string;
  sizeBytes: number;
  /** The head of a text attachment, for its run's page (data/previews.ts); absent when not read. */
  preview?: AttachmentPreview;
};

/** What the pages show of a run. Never carries the run's sealed headers. */
export type ViewRun = {
  id: string;
  /** The run's own capability token; its page and artifacts live under it. */
  token: string;
  position: number;
  testName: string;
  status: RunStatus;
  resultSummary: string;
  outcomeCode: string | null;
  outcomeMessage: string | null;
  outcomeStep: number | null;
  skipReason: string | null;
  baseUrl: string;
  attempt: number;
  /** 0-based index of the test attempt the run is at (more than 0 once retried). */
  retry: number;
  /** Retries the run is allowed after a failed or error attempt. */
  retries: number;
  /** Where a Playwright test is declared (file, line, column, title path, project); null for a step test. */
  location: TestLocation | null;
  /** Steps the test's definition lists; 0 for a Playwright test, whose steps are known as they run. */
  plannedSteps: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  durationMs: number | null;
  suiteRunId: string | null;
  /** When retention deleted the run's screenshots, trace and video: the pages say "expired" where they were. */
  artifactsExpiredAt: Date | null;
  /** Steps and artifacts of the latest attempt; null when not loaded (passed runs on a suite page). */
  steps: ViewStep[] | null;
  artifacts: ViewArtifact[] | null;
  /** What the latest attempt's pages reported; null when not loaded. */
  pageEvents: PageEvent[] | null;
  /** The test attempts that were retried, oldest first, with their own steps and artifacts; null when not loaded. */
  earlierAttempts: ViewAttempt[] | null;
  /** The test's last outcomes up to this run, oldest first (history.ts); absent when not loaded. */
  history?: ViewHistory;
  /** The deployed version the run executes and its warnings (on the run's page); absent when not loaded or none. */
  deployment?: ViewDeployment;
  /** The workspace's runs ahead of it when it was enqueued; null when not recorded. */
  queuedAhead: number | null;
  /** A setup_failed run's setup test, on its suite run's page (on the run's page); absent otherwise. */
  failedSetup?: ViewFailedSetup;
  /** A run outside a suite run: the setup tests its test depended on (its page shows them); absent when none. */
  setupTests?: ViewSetupTest[];
  /** What the run found of its snapshots against the baselines (on the run's page); absent when not loaded or none. */
  visualChanges?: ViewVisualChange[];
};

/** A snapshot a run found without a baseline (`new`) or different from it (`changed`), and its approval. */
export type ViewVisualChange = {
  id: string;
  /** The snapshot's name as Playwright attaches it (`home.png`): its images are `home-expected.png` and so on. */
  name: string;
  /** The baseline's path in the bundle. */
  path: string;
  kind: 'new' | 'changed';
  approvedAt: Date | null;
  /** The name of the API key that approved it. */
  approvedBy: string | null;
};

/** What one run of a suite run found of its snapshots: awaiting approval (changed, new) and approved. */
export type ViewVisualSummary = { changed: number; new: number; approved: number; names: string[] };

/** A text attachment's head, shown on its page (data/previews.ts). */
type AttachmentPreview = { text: string; truncated: boolean };

/** A setup test of a suite run (or a run outside one) with the steps and evidence of the execution shown (docs/VIEW.md, "Setup tests"). */
export type ViewSetupTest = SetupTestWithSteps & {
  /** The heads of its text attachments by artifact id (data/previews.ts); absent when none was read. */
  previews?: Map<string, AttachmentPreview>;
};

/** The setup test a setup_failed run ended on, and the signed token of its suite run's page (none outside a suite run: the run's own page shows it). */
type ViewFailedSetup = {
  id: string;
  name: string;
  status: RunStatus;
  resultSummary: string;
  suiteRunId: string | null;
  suiteRunToken: string | null;
};

/**
 * A project's deployed version as a run's page names it: its number, what discovery warned of, and
 * whether it was a preview (not the project's active version when the run was enqueued).
 */
export type ViewDeployment = { version: number; warnings: string[]; preview: boolean };

/**
 * How long a run or suite run waited in the queue (created → started; until now while queued), and
 * the workspace's runs ahead of it when it was enqueued (null when not recorded: older rows).
 */
export type ViewQueueWait = { waitedMs: number; runsAhead: number | null; queued: boolean };

/** One outcome in a test's history: a run of the same test, linked when the page may open it. */
export type ViewHistoryMark = {
  id: string;
  /** The run's token signed with the page's terms; null when such a link would not open it. */
  token: string | null;
  status: 'passed' | 'failed' | 'error';
  /** Passed on a retry. */
  flaky: boolean;
  /** When the outcome was known (finished, else created). */
  at: Date;
  createdAt: Date;
  /** The run the history is shown for. */
  current: boolean;
};

export type ViewHistory = ViewHistoryMark[];

/** A test attempt of a run that failed or ended in error and was retried, with its own steps, artifacts and page events. */
export type ViewAttempt = Pick<
  ViewRun,
  'status' | 'resultSummary' | 'outcomeCode' | 'outcomeMessage' | 'outcomeStep' | 'startedAt' | 'finishedAt'
> & {
  /** 0-based index of the test attempt (0 is the first). */
  retry: number;
  durationMs: number;
  steps: ViewStep[];
  artifacts: ViewArtifact[];
  pageEvents: PageEvent[];
};

/** The suite's counters, and how many of its passes were flaky (passed on a retry; counted in `passed` too). */
export type ViewCounts = SuiteCounts & { flaky: number };

export type ViewSuiteRun = {
  id: string;
  token: string;
  suiteName: string;
  suiteSlug: string;
  projectName: string;
  projectSlug: string;
  status: RunStatus;
  counts: ViewCounts;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  runs: ViewRun[];
  /** The deployed version the suite run executes and its warnings; absent for one from before deployments. */
  deployment?: ViewDeployment;
  /** The setup tests its Playwright tests depended on; absent when not loaded or none. */
  setupTests?: ViewSetupTest[];
  /** The workspace's runs ahead of its first run when it was enqueued; null when not recorded. */
  queuedAhead: number | null;
  /** What its runs found of their snapshots, by run id (only runs that found something); absent when none. */
  visualChanges?: Map<string, ViewVisualSummary>;
};

/**
 * The small JSON the page polls while a suite or run is not terminal. `durationText` is the
 * duration as the page shows it, so the browser needs no formatting rule of its own.
 */
export type LiveStatus = {
  status: RunStatus;
  terminal: boolean;
  counts?: ViewCounts;
  /** The page's line on its time in the queue (see queueWaitText), moving on while it waits; absent when it never started. */
  queueWaitText?: string;
  runs: Array<{
    id: string;
    status: RunStatus;
    /** Passed on a retry. */
    flaky: boolean;
    resultSummary: string;
    durationMs: number | null;
    durationText: string;
  }>;
};
