import path from 'node:path';
import { groupLimitNow, scratchFullNow } from '../../../sandbox';
import { playwrightTestKey } from './discover';
import { MAX_LINE_BYTES, type OversizedRecord } from '../inside/protocol';
import { identityOfHead, readLine } from '../inside/protocol-read';
import {
  classifyAttempt,
  invalidDefinition,
  limitHit,
  resultTooLarge,
  runnerKilled,
  runnerKilledBefore,
  setupFailed,
  type PlaywrightOutcome,
} from './outcome';
import { resultOf } from './result-of';
import { stripAnsi } from './strip-ansi';
import { snapshotFindings } from './snapshots';
import { bundlePath, hostPath, INSIDE, type Layout } from './sandboxed-cli';
import type {
  MissingBaselines,
  PlaywrightAttachment,
  PlaywrightAttempt,
  PlaywrightError,
  PlaywrightStep,
  PlaywrightTestRef,
  PlaywrightTestResult,
  RefusedRequest,
  SetupTestResult,
} from './types';

/** The attachments of a reporter line, checked: the sandbox wrote them. Paths are mapped by `hostPath`. */
function attachmentsOfLine(raw: unknown, hostPath: (inside: string) => string): PlaywrightAttachment[] {
  if (!Array.isArray(raw)) return [];
  return raw.slice(0, 10_000).flatMap((item: unknown): PlaywrightAttachment[] => {
    if (typeof item !== 'object' || item === null) return [];
    const a = item as Record<string, unknown>;
    if (typeof a.name !== 'string' || typeof a.contentType !== 'string') return [];
    const own = {
      name: a.name.slice(0, 1_000),
      contentType: a.contentType.slice(0, 256),
      automatic: a.automatic === true,
    };
    return [typeof a.path === 'string' ? { ...own, path: hostPath(a.path) } : own];
  });
}

/** Which test a line is about. */
interface Identity {
  file: string;
  project: string;
  titlePath: string[];
}

type Location = NonNullable<PlaywrightStep['location']>;

/** A location in the team's own files (the bundle's, not a package it holds), relative to its root; else none. */
function teamLocation(location: Location | undefined, layout: Layout): Location | undefined {
  if (!location?.file.startsWith(`${layout.bundle}/`)) return undefined;
  const file = bundlePath(location.file, layout);
  return file.split('/').includes('node_modules') ? undefined : { ...location, file };
}

/** The innermost frame of a stack in the team's own files (`at … (/work/bundle/e2e/po.ts:10:45)`). */
function teamFrame(stack: string | undefined, layout: Layout): Location | undefined {
  for (const match of (stack ?? '').matchAll(/^\s*at (?:.*? \()?(.+?):(\d+):(\d+)\)?$/gm)) {
    const [, file = '', line = '0', column = '0'] = match;
    const found = teamLocation({ file, line: Number(line), column: Number(column) }, layout);
    if (found) return found;
  }
  return undefined;
}

/**
 * An error as the sandbox reported it, its texts without colours, its location the team's (the
 * innermost frame of its stack in the team's files when Playwright's own points elsewhere, into a
 * package: the service's install path is never shown as the place a test failed).
 */
function relativeError(error: PlaywrightError, layout: Layout): PlaywrightError {
  const clean = {
    ...error,
    message: stripAnsi(error.message),
    stack: error.stack === undefined ? undefined : stripAnsi(error.stack),
  };
  const own = teamLocation(error.location, layout);
  const frame = teamFrame(clean.stack, layout);
  // Playwright 1.39 resolves the location's file twice over (`/work/bundle/bundle/tests/a.spec.ts`):
  // the stack's frame at the same line and column names the file right.
  const same = own && frame && own.line === frame.line && own.column === frame.column;
  return { ...clean, location: same ? frame : (own ?? frame) };
}

/** Steps as the sandbox reported them, each located in the team's own files or not at all. */
export function relativeSteps(steps: PlaywrightStep[], layout: Layout): PlaywrightStep[] {
  return steps.map((step) => ({
    ...step,
    error: step.error ? relativeError(step.error, layout) : undefined,
    location: teamLocation(step.location, layout) ?? (step.error ? teamFrame(step.error.stack, layout) : undefined),
    steps: relativeSteps(step.steps, layout),
  }));
}

/**
 * Playwright's error for a test whose worker process died under it: the sandbox's memory limit
 * (its OOM kill) does that, which is known only once the sandbox is gone.
 */
const WORKER_DIED = /worker process exited unexpectedly/;

/** A setup test's name as a dependant's setup_failed summary gives it: `[project] › title path`. */
const setupName = (line: Identity) => [`[${line.project}]`, ...line.titlePath].join(' › ');

/** Turns the reporter's lines into each selected test's result, as its last attempt ends. */
export class ResultCollector {
  private readonly selected: Map<string, PlaywrightTestRef>;
  private readonly attempts = new Map<string, PlaywrightAttempt[]>();
  private readonly done = new Map<string, PlaywrightTestResult>();
  /** Tests that ran but were not selected (setup projects), by name, and their outcome when they failed. */
  private readonly failedSetup: { name: string; summary: string }[] = [];
  private readonly loadErrors: string[] = [];
  /** Selected tests whose worker died under them, reported once the sandbox's limit is known. */
  private readonly died = new Map<string, { outcome: PlaywrightOutcome; blocked: readonly RefusedRequest[] }>();
  /** Selected tests that began, in order; whether the runner reported its end. */
  private readonly begun: string[] = [];
  private ended = false;
  /** Whether the runner began the run (the tests loaded). */
  private started = false;
  /** Whether the sandbox's groups had reached a limit when the previous test ended. */
  private groupLimitSeen = false;

  constructor(
    tests: readonly PlaywrightTestRef[],
    private readonly scratchDir: string,
    private readonly onResult: (result: PlaywrightTestResult) => void,
    private readonly takeBlocked: (until?: number) => readonly RefusedRequest[],
    private readonly onBegin: (key: string) => void = () => undefined,
    private readonly layout: Layout = INSIDE,
    /** Told each setup test's result (a test that ran but was not selected) as its last attempt ends. */
    private readonly onSetup: (setup: SetupTestResult) => void = () => undefined,
    /** What a snapshot without a baseline makes of its test (the project's `missingBaselines`). */
    private readonly missingBaselines: MissingBaselines = 'pass',
  ) {
    this.selected = new Map(tests.map((test) => [playwrightTestKey(test), test]));
  }

  /** Whether the runner began the run: its tests loaded and listed. */
  get runnerBegan(): boolean {
    return this.started;
  }

  line(text: string): void {
    // The sandbox wrote it: a line that is not a record of the protocol's is refused.
    const line = readLine(text);
    if (line === null) return;
    if (line.type === 'error') this.loadErrors.push(line.error.message);
    if (line.type === 'end') this.ended = true;
    if (line.type === 'start') this.started = true;
    if (line.type === 'oversized') this.oversized(line);
    if (line.type !== 'begin' && line.type !== 'attempt') return;
    const key = playwrightTestKey(line);
    if (line.type === 'begin') {
      if (!this.selected.has(key)) return;
      this.begun.push(key);
      this.onBegin(key);
      return;
    }
    const attempt: PlaywrightAttempt = {
      retry: line.retry,
      status: line.status,
      expectedStatus: line.expectedStatus,
      durationMs: line.durationMs,
      annotations: line.annotations,
      errors: line.errors.map((e) => relativeError(e, this.layout)),
      steps: relativeSteps(line.steps, this.layout),
      attachments: attachmentsOfLine(line.attachments, (inside) => hostPath(this.scratchDir, inside, this.layout)),
      stdout: line.stdout,
      stderr: line.stderr,
    };
    attempt.snapshots = snapshotFindings(attempt, path.join(this.scratchDir, 'bundle'), (inside) =>
      hostPath(this.scratchDir, inside, this.layout),
    );
    const attempts = [...(this.attempts.get(key) ?? []), attempt];
    this.attempts.set(key, attempts);
    if (!line.final) return;
    // The refusals asked for since the previous test ended, up to this one's end, are this one's
    // (one test runs at a time); the next test may have begun before this line was read.
    const blocked = this.takeBlocked(line.endedAt);
    const outcome = classifyAttempt(attempt, blocked, this.missingBaselines);
    const limit = this.limitAtEnd(outcome);
    if (!this.selected.has(key)) {
      const name = setupName(line);
      if (outcome.status === 'error' || outcome.status === 'failed')
        this.failedSetup.push({ name, summary: outcome.summary });
      const ref = { file: line.file, line: line.line, column: line.column, project: line.project };
      const endedAt = line.endedAt;
      const result = resultOf(key, limit === null ? outcome : limitHit(limit), attempts, blocked);
      this.onSetup({ ...result, name, ref: { ...ref, titlePath: line.titlePath }, endedAt });
      return;
    }
    if (limit !== null) {
      this.finish(key, limitHit(limit), attempts, blocked);
      return;
    }
    if (WORKER_DIED.test(attempt.errors[0]?.message ?? '')) {
      this.died.set(key, { outcome, blocked });
      return;
    }
    this.finish(key, outcome, attempts, blocked);
  }

  /**
   * A line over the cap (tail.ts), dropped unread: the test whose result it was (its head names it;
   * else the last test that began without a result, the one running) ends on the output limit.
   */
  private oversized(line: OversizedRecord): void {
    const identity = identityOfHead(line.head);
    const key = identity ? playwrightTestKey(identity) : this.begun.findLast((begun) => !this.done.has(begun));
    if (key === undefined || !this.selected.has(key)) return;
    this.finish(key, resultTooLarge(MAX_LINE_BYTES), this.attempts.get(key) ?? [], this.takeBlocked());
  }

  /**
   * The sandbox limit a test that just ended is to be reported as, whatever the test made of it:
   * the scratch quota spent (it wrote it full, or one before it did); a memory or process limit its
   * groups reached while it ran (a fork bomb the test's own timeout outlasted), or reached before
   * it and it did not pass (the sandbox is at its limit still). Null when none.
   */
  private limitAtEnd(outcome: PlaywrightOutcome): string | null {
    const groups = groupLimitNow(this.scratchDir);
    const reachedNow = groups !== null && !this.groupLimitSeen;
    this.groupLimitSeen ||= groups !== null;
    if (outcome.status === 'skipped') return null;
    if (scratchFullNow(this.scratchDir)) return 'disk';
    return reachedNow || outcome.status !== 'passed' ? groups : null;
  }

  private finish(
    key: string,
    outcome: PlaywrightOutcome,
    attempts: PlaywrightAttempt[],
    blocked: readonly RefusedRequest[] = [],
  ): void {
    if (this.done.has(key)) return;
    const result = resultOf(key, outcome, attempts, blocked);
    this.done.set(key, result);
    this.onResult(result);
  }

  /**
   * Once the sandbox is gone: each selected test without a result gets one, from why it did not
   * end (a limit, a setup test that failed, the runner killed by a test, a bundle that did not
   * load). Not after a cancel. A test whose worker died under it is reported now: resource_limit
   * when a limit was hit (the OOM kill). A test whose try was not its last by its retries, yet that
   * Playwright did not retry (an error it does not retry: a snapshot written for want of a
   * baseline), ended with that try once the runner ended.
   */
  finishRest(ending: { limit: string | null; aborted: boolean; stderr: string }): PlaywrightTestResult[] {
    for (const [key, { outcome, blocked }] of this.died)
      this.finish(key, ending.limit === null ? outcome : limitHit(ending.limit), this.attempts.get(key) ?? [], blocked);
    if (!ending.aborted) {
      // Tests began and the runner never reported its end: the last that began without its result
      // was running when it stopped.
      const killer = this.ended ? undefined : this.begun.findLast((key) => !this.done.has(key));
      for (const key of this.selected.keys()) {
        if (this.done.has(key)) continue;
        const attempts = this.attempts.get(key) ?? [];
        const last = attempts.at(-1);
        if (last && this.ended && ending.limit === null) {
          const blocked = this.takeBlocked();
          this.finish(key, classifyAttempt(last, blocked, this.missingBaselines), attempts, blocked);
        } else this.finish(key, this.missingOutcome(key, killer, ending), attempts);
      }
    }
    return [...this.done.values()];
  }

  private missingOutcome(
    key: string,
    killer: string | undefined,
    ending: { limit: string | null; stderr: string },
  ): PlaywrightOutcome {
    if (ending.limit !== null) return limitHit(ending.limit);
    const setup = this.failedSetup[0];
    if (setup) return setupFailed(setup.name, setup.summary);
    // No limit stopped the runner under a test: that test's code killed it (it alone runs beside it).
    if (killer === key) return runnerKilled();
    const ref = killer === undefined ? undefined : this.selected.get(killer);
    if (ref) return runnerKilledBefore(ref.titlePath.join(' › '));
    // Begun and not ended, no test's begin read: a test killed it before its begin reached the reporter.
    if (this.started && !this.ended && this.loadErrors.length === 0) return runnerKilled(false);
    const message = this.loadErrors[0] ?? (ending.stderr.trim() || 'the test was not found in the bundle');
    return invalidDefinition(message);
  }
}
