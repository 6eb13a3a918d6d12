/*
 * Runs INSIDE the sandbox: the reporter the wrapper config forces. It writes one JSON line per
 * event to a file under /work, which the worker tails, so each test's attempt reaches the worker
 * the moment it ends. In list mode (discovery) it writes the projects and tests instead.
 * Its records are protocol.ts's. It imports nothing but Node and its neighbours: the worker's
 * modules are not in the sandbox.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type {
  FullConfig,
  Reporter,
  Suite,
  TestCase,
  TestError,
  TestResult,
  TestStep,
} from 'playwright/types/testReporter';
import {
  recordLine,
  STEP_CATEGORIES,
  type AttachmentRecord,
  type ErrorRecord,
  type ReporterRecord,
  type StepRecord,
  type TestIdentity,
} from './protocol';

interface Options {
  mode: 'list' | 'run';
  /** Where the lines go (a file under /work). */
  file: string;
  /** The bundle root, which paths are made relative to. */
  root: string;
}

const MAX_OUTPUT = 256 * 1024;
/**
 * Bodies of one attempt's attachments written to files (testInfo.attach with a body): at most this
 * many, of at most this many bytes in all; the worker's own caps are narrower or equal.
 */
const MAX_BODIES = 100;
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Playwright's own attachments from its `screenshot`, `video` and `trace` options (and its failure's page snapshot). */
const AUTOMATIC_NAMES = new Set(['screenshot', 'video', 'trace', 'error-context']);
const RUNTIME_DIR = path.dirname(__filename);
const STEP_CATEGORY = new Set<string>(STEP_CATEGORIES);

function titlePathOf(test: TestCase): string[] {
  // ['', project, file, ...describes, title]
  return test.titlePath().slice(3);
}

/** An error's message with its causes, each on a line of its own as Playwright's own reporters print them. */
function messageOf(error: TestError): string {
  const own = error.message ?? error.value ?? 'unknown error';
  return error.cause ? `${own}\n[cause]: ${messageOf(error.cause)}` : own;
}

function errorOf(error: TestError): ErrorRecord {
  return {
    message: messageOf(error),
    stack: error.stack,
    location: error.location,
    snippet: error.snippet,
  };
}

function stepsOf(steps: TestStep[], start: number): StepRecord[] {
  const out: StepRecord[] = [];
  for (const step of steps) {
    // The service's own calls (the fixture that sends the headers) are not the test's steps.
    if (step.location?.file.startsWith(RUNTIME_DIR)) continue;
    if (!STEP_CATEGORY.has(step.category)) {
      out.push(...stepsOf(step.steps, start));
      continue;
    }
    out.push({
      title: step.title,
      category: step.category as StepRecord['category'],
      startMs: Math.max(0, step.startTime.getTime() - start),
      durationMs: step.duration,
      error: step.error ? errorOf(step.error) : undefined,
      location: step.location,
      steps: stepsOf(step.steps, start),
    });
  }
  return out;
}

function outputOf(chunks: (string | Buffer)[]): string {
  const text = chunks.map((chunk) => chunk.toString()).join('');
  return text.length > MAX_OUTPUT ? `${text.slice(0, MAX_OUTPUT)}\n[truncated]` : text;
}

/** Playwright's own suite fields, which its reporter API does not name (pinned @playwright/test). */
interface SuiteModes {
  _parallelMode?: 'none' | 'default' | 'serial' | 'parallel';
  _hooks?: { type: string }[];
}

/**
 * Whether Playwright may run the test in a worker apart from its file's other tests: inside a
 * parallel scope (`fullyParallel`, a `parallel` describe), with no serial or default-mode group and
 * no beforeAll/afterAll around it, as Playwright's own grouping decides.
 */
/**
 * A test's tags: Playwright's (1.42 and later); before, the `@words` of its title and its describes'
 * titles, which those versions' `--grep @tag` matched, as later versions make them tags.
 */
function tagsOf(test: TestCase): string[] {
  if (Array.isArray((test as { tags?: unknown }).tags)) return test.tags;
  return titlePathOf(test).flatMap((title) => title.match(/@\S+/g) ?? []);
}

function runsApart(test: TestCase): boolean {
  let parallel = false;
  for (let parent: Suite | undefined = test.parent; parent; parent = parent.parent) {
    const modes = parent as unknown as SuiteModes;
    if (modes._parallelMode === 'serial' || modes._parallelMode === 'default') return false;
    if ((modes._hooks ?? []).some((hook) => hook.type === 'beforeAll' || hook.type === 'afterAll')) return false;
    parallel ||= modes._parallelMode === 'parallel';
  }
  return parallel;
}

/**
 * The config's own `workers` when it is a number (`workers: 1`, `workers: process.env.CI ? 1 :
 * undefined`): read from the loaded config module, since FullConfig.workers is already resolved
 * (a percentage or no value becomes a count of this machine's CPUs). Null when not a number or not known.
 */
function teamWorkers(config: FullConfig): number | null {
  const loaded = config.configFile ? (require.cache[config.configFile]?.exports as unknown) : undefined;
  const team = (loaded as { default?: unknown } | undefined)?.default ?? loaded;
  const raw = (team as { workers?: unknown } | undefined)?.workers;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : null;
}

type Attachment = TestResult['attachments'][number];

/**
 * Whether Playwright attached it by its own options: one of its names, a file in the test's output
 * folder. testInfo.attach copies a file the test names into the folder's `attachments` (every
 * supported version), and a body has no path: those are the test's, whatever their names.
 */
function isAutomatic(attachment: Attachment): boolean {
  if (!AUTOMATIC_NAMES.has(attachment.name) || attachment.path === undefined) return false;
  return path.basename(path.dirname(attachment.path)) !== 'attachments';
}

class TestrunReporter implements Reporter {
  private suite: Suite | undefined;
  /** Body files written so far (each gets the next number). */
  private bodies = 0;
  private readonly finished = new Set<TestCase>();

  private readonly options: Options;

  /** Without options (`--reporter <this file>` when listing): list mode, to <state>/list.jsonl. */
  constructor(options: Partial<Options> = {}) {
    const state = process.env.TESTRUN_STATE_DIR ?? '/work/.testrun';
    const root = process.env.TESTRUN_BUNDLE_DIR ?? '/work/bundle';
    this.options = { mode: 'list', file: `${state}/list.jsonl`, root, ...options };
    writeFileSync(this.options.file, '');
  }

  printsToStdio(): boolean {
    return false;
  }

  private write(record: ReporterRecord): void {
    appendFileSync(this.options.file, recordLine(record));
  }

  private identity(test: TestCase): TestIdentity {
    return {
      file: path.relative(this.options.root, test.location.file).split(path.sep).join('/'),
      line: test.location.line,
      column: test.location.column,
      project: test.parent.project()?.name ?? '',
      titlePath: titlePathOf(test),
    };
  }

  onBegin(config: FullConfig, suite: Suite): void {
    this.suite = suite;
    // Written before any test can run: a runner killed before it reports a test's begin has still begun.
    if (this.options.mode !== 'list') return this.write({ type: 'start' });
    const projects = config.projects.map((project) => ({
      name: project.name,
      dependencies: project.dependencies,
      browser: project.use.browserName ?? project.use.defaultBrowserType ?? 'chromium',
    }));
    // The folder Playwright's reporters name files from (the config's testDir, else its folder).
    const rootDir = path.relative(this.options.root, config.rootDir).split(path.sep).join('/');
    this.write({
      type: 'config',
      webServer: config.webServer !== null,
      projects,
      workers: teamWorkers(config),
      rootDir,
    });
    for (const test of suite.allTests())
      this.write({ type: 'test', ...this.identity(test), tags: tagsOf(test), parallel: runsApart(test) });
  }

  onTestBegin(test: TestCase, result: TestResult): void {
    if (result.retry === 0) this.write({ type: 'begin', ...this.identity(test) });
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    const final =
      result.status === 'skipped' ||
      result.status === 'interrupted' ||
      result.status === test.expectedStatus ||
      result.retry >= test.retries;
    if (final) this.finished.add(test);
    this.write({
      type: 'attempt',
      ...this.identity(test),
      final,
      // When the runner learnt of the end (after the test's own fixtures closed its pages): a
      // request the network policy refused later is the next test's.
      endedAt: Date.now(),
      retry: result.retry,
      status: result.status,
      expectedStatus: test.expectedStatus,
      durationMs: result.duration,
      annotations: test.annotations.map((a) => ({ type: a.type, description: a.description })),
      errors: result.errors.map(errorOf),
      steps: stepsOf(result.steps, result.startTime.getTime()),
      attachments: this.attachmentsOf(result.attachments),
      stdout: outputOf(result.stdout),
      stderr: outputOf(result.stderr),
    });
  }

  /**
   * An attempt's attachments for the worker: a file's path, or a body written to a file of its own
   * under the state folder (never into the line, whose size is capped), within MAX_BODIES and
   * MAX_BODY_BYTES; one not written is listed with no path and its size.
   */
  private attachmentsOf(attachments: Attachment[]): AttachmentRecord[] {
    const folder = path.join(path.dirname(this.options.file), 'attachments');
    let [count, bytes] = [0, 0];
    return attachments.map((a) => {
      const own = { name: a.name, contentType: a.contentType, automatic: isAutomatic(a) };
      if (a.path !== undefined) return { ...own, path: a.path };
      const body = a.body ?? Buffer.alloc(0);
      if (count >= MAX_BODIES || bytes + body.length > MAX_BODY_BYTES) return { ...own, size: body.length };
      const file = path.join(folder, `body-${++this.bodies}`);
      try {
        mkdirSync(folder, { recursive: true });
        writeFileSync(file, body);
      } catch {
        return { ...own, size: body.length };
      }
      [count, bytes] = [count + 1, bytes + body.length];
      return { ...own, path: file };
    });
  }

  onError(error: TestError): void {
    this.write({ type: 'error', error: errorOf(error) });
  }

  onEnd(): void {
    if (this.options.mode !== 'run' || !this.suite) return;
    // Tests that never ran: a setup project they depend on failed, or the run was stopped.
    for (const test of this.suite.allTests()) {
      if (!this.finished.has(test)) this.write({ type: 'notRun', ...this.identity(test) });
    }
    this.write({ type: 'end' });
  }
}

export default TestrunReporter;
