/*
 * The protocol between the worker and the sandbox, in one place: the records the reporter writes
 * (one JSON line each, which the worker tails and reads with protocol-read.ts), the line naming a
 * test to stop (runner/interrupt.ts writes it, the fixture looks for it) and the wrapper config's options
 * (the worker writes them, wrapper-config.ts reads them). Both sides compile against these types.
 * Runs INSIDE the sandbox too: it imports nothing but Node.
 */

/**
 * The longest line the worker holds: a test's result is one line, and the team's code decides
 * its size (step titles, annotations, error messages; the reporter cuts stdout and stderr to
 * 256 Ki characters each). A plain result is kilobytes, a long test's steps some hundreds.
 */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

export interface LocationRecord {
  file: string;
  line: number;
  column: number;
}

export interface ErrorRecord {
  message: string;
  stack?: string;
  location?: LocationRecord;
  snippet?: string;
}

export const STEP_CATEGORIES = ['test.step', 'expect', 'pw:api', 'hook', 'fixture'] as const;
export type StepCategory = (typeof STEP_CATEGORIES)[number];

export interface StepRecord {
  title: string;
  category: StepCategory;
  startMs: number;
  durationMs: number;
  error?: ErrorRecord;
  location?: LocationRecord;
  steps: StepRecord[];
}

/** An attachment: a file's path, or a body the reporter did not write (over its bounds) with its size. */
export interface AttachmentRecord {
  name: string;
  contentType: string;
  /** Playwright's own, from its screenshot, video and trace options; else the test attached it on purpose. */
  automatic: boolean;
  path?: string;
  size?: number;
}

export const TEST_STATUSES = ['passed', 'failed', 'timedOut', 'skipped', 'interrupted'] as const;
export type TestStatus = (typeof TEST_STATUSES)[number];

/** Which test a record is about: its file relative to the bundle root, project and title path. */
export interface TestIdentity {
  file: string;
  line: number;
  column: number;
  project: string;
  /** The describes and the title, without the root, project and file. */
  titlePath: string[];
}

/** List mode: the config, first. */
export interface ConfigRecord {
  type: 'config';
  webServer: boolean;
  projects: { name: string; dependencies: string[]; browser: string }[];
  /** The team's own `workers` when a number; else null. */
  workers: number | null;
  /** The folder Playwright's reporters name files from, relative to the bundle root. */
  rootDir: string;
}

/** List mode: one test. */
export interface ListedTestRecord extends TestIdentity {
  type: 'test';
  tags: string[];
  /** Whether Playwright may run it in a worker apart from its file's other tests. */
  parallel: boolean;
}

/** Run mode: the tests loaded and the runner began the run (its onBegin), before any test. */
export interface StartRecord {
  type: 'start';
}

/** A test's first attempt began. */
export interface BeginRecord extends TestIdentity {
  type: 'begin';
}

/** One attempt of a test ended. */
export interface AttemptRecord extends TestIdentity {
  type: 'attempt';
  /** No attempt follows (it passed as expected, was skipped or interrupted, or retries are spent). */
  final: boolean;
  /** When the runner learnt of the end (ms since the epoch). */
  endedAt: number;
  retry: number;
  status: TestStatus;
  expectedStatus: TestStatus;
  durationMs: number;
  annotations: { type: string; description?: string }[];
  errors: ErrorRecord[];
  steps: StepRecord[];
  attachments: AttachmentRecord[];
  stdout: string;
  stderr: string;
}

/** A test that never ran (a setup project it depends on failed, or the run was stopped). */
export interface NotRunRecord extends TestIdentity {
  type: 'notRun';
}

/** An error outside a test (the config or a spec did not load). */
export interface ErrorLineRecord {
  type: 'error';
  error: ErrorRecord;
}

/** The runner ended the run (its onEnd). */
export interface EndRecord {
  type: 'end';
}

/** Every record the reporter writes, one a line. */
export type ReporterRecord =
  | ConfigRecord
  | ListedTestRecord
  | StartRecord
  | BeginRecord
  | AttemptRecord
  | NotRunRecord
  | ErrorLineRecord
  | EndRecord;

/** What the worker's tail makes of a line over {@link MAX_LINE_BYTES}, which it drops unread. */
export interface OversizedRecord {
  type: 'oversized';
  /** Its length in bytes. */
  bytes: number;
  /** Its first bytes. */
  head: string;
}

/** Every record the worker reads off the reporter's file. */
export type LineRecord = ReporterRecord | OversizedRecord;

const IDENTITY_KEYS = ['file', 'line', 'column', 'project', 'titlePath'] as const;

/**
 * A record as its line (newline included). The type and a test's identity come first, so that the
 * head of a line over the cap still names its test (protocol-read.ts, identityOfHead).
 */
export function recordLine(record: ReporterRecord): string {
  const head: Record<string, unknown> = { type: record.type };
  for (const key of IDENTITY_KEYS) if (key in record) head[key] = (record as unknown as Record<string, unknown>)[key];
  return `${JSON.stringify({ ...head, ...record })}\n`;
}

/** The file of the worker's control directory naming the tests to stop, one {@link interruptLine} each. */
export const INTERRUPT_FILE = 'interrupt.jsonl';

/** The line naming a test to stop: its file relative to the bundle root, its project and its title path. */
export function interruptLine(test: Pick<TestIdentity, 'file' | 'project' | 'titlePath'>): string {
  return JSON.stringify([test.file, test.project, test.titlePath]);
}

/** A test the wrapper selects. */
export type WrapperTest = Pick<TestIdentity, 'file' | 'project' | 'titlePath'>;

/** The file of the run's state folder holding the {@link WrapperOptions}. */
export const OPTIONS_FILE = 'options.json';

/** The wrapper config's options, which the worker writes to <state>/{@link OPTIONS_FILE} (no secret: headers go elsewhere). */
export interface WrapperOptions {
  /** The bundle's root: the working directory, and what test files are relative to. */
  bundleDir: string;
  configDir: string;
  outputDir: string;
  reporter: string;
  resultsFile: string;
  testListFile: string;
  tests: WrapperTest[];
  workers: number;
  baseURL: string | null;
  proxy: { server: string; username?: string; password?: string; bypass?: string } | null;
  retries: number | null;
  timeoutMs: number | null;
  chromium: string;
  /**
   * Chromium's headless shell, which Playwright runs a headless Chromium on unless the config names a
   * `channel` (a full browser's new headless mode); null when the host has none (then `chromium`).
   */
  headlessShell: string | null;
  chromiumArgs: readonly string[];
  /** Chromium features turned off, with any the team's `launchOptions.args` turn off added (one switch: Chromium keeps the last). */
  disabledFeatures: readonly string[];
  /** A mode, or Playwright's object form of `use.trace` (what it records beside the mode). */
  trace: string | TraceOptions;
  video: string;
  screenshot: string;
  /**
   * How the runner is told the tests: `list`, its `--test-list` (Playwright 1.56 and later); `title`,
   * each selected project's `grep` matching exactly their title paths (older versions, which have none).
   */
  selectBy: 'list' | 'title';
}

/** Playwright's `use.trace` as an object: the mode and which parts the trace records. */
export interface TraceOptions {
  mode: string;
  snapshots: boolean;
  screenshots: boolean;
  sources: boolean;
}

/** The options file as the worker writes it. */
export function wrapperOptionsText(options: WrapperOptions): string {
  return JSON.stringify(options);
}

/** The options file as the wrapper reads it (the worker wrote it before the runner started). */
export function parseWrapperOptions(text: string): WrapperOptions {
  return JSON.parse(text) as WrapperOptions;
}
