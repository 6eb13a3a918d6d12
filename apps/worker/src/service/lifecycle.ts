import { errorMessage, type Logger } from '@testrun/core/logger';
import { withTimeout } from '@testrun/core/with-timeout';

/** Undoes what a task's set-up made (closes a connection, stops a loop). */
export type TearDown = () => unknown;

/** What a task's set-up returns: what it made, and how to undo it. */
export type Started<T> = {
  value: T;
  tearDown: TearDown;
  /** Bound of this tear-down; default the lifecycle's. */ deadlineMs?: number;
};

/** Options of {@link Lifecycle}. */
export interface LifecycleOptions {
  logger: Logger;
  /** Longest each tear-down may take before it is abandoned and the next one runs. Default 10000 ms. */
  tearDownMs?: number;
}

type Registered = { name: string; tearDown: TearDown; deadlineMs: number };

/**
 * A process's start-up as an ordered list of tasks, each a name and a set-up that returns its
 * tear-down. A tear-down is registered only once its set-up has succeeded; {@link close} runs the
 * registered ones in reverse order, each within its deadline, and logs (never throws) one that
 * fails or does not finish. {@link start} closes what was opened when a set-up fails halfway.
 */
export class Lifecycle {
  private readonly registered: Registered[] = [];
  private closing: Promise<void> | null = null;
  private readonly tearDownMs: number;

  constructor(private readonly options: LifecycleOptions) {
    this.tearDownMs = options.tearDownMs ?? 10_000;
  }

  /** Runs a task's set-up and registers its tear-down; returns what the set-up made. */
  async task<T>(name: string, setUp: () => Started<T> | Promise<Started<T>>): Promise<T> {
    if (this.closing) throw new Error(`cannot set up ${name}: the lifecycle is closing`);
    const started = await setUp();
    this.registered.push({ name, tearDown: started.tearDown, deadlineMs: started.deadlineMs ?? this.tearDownMs });
    return started.value;
  }

  /** Runs `build` (which sets up tasks); when it throws, closes every task it set up, then rethrows. */
  async start<T>(build: (lifecycle: this) => Promise<T>): Promise<T> {
    try {
      return await build(this);
    } catch (error) {
      this.options.logger.error('start-up failed; closing what was set up', { error: errorMessage(error) });
      await this.close();
      throw error;
    }
  }

  /** The names of the registered tasks, in set-up order. */
  get names(): string[] {
    return this.registered.map((task) => task.name);
  }

  /** Runs the registered tear-downs, last set up first; every call after the first waits for the same close. */
  close(): Promise<void> {
    this.closing ??= this.closeAll();
    return this.closing;
  }

  private async closeAll(): Promise<void> {
    for (let task = this.registered.pop(); task; task = this.registered.pop()) {
      const { name, tearDown, deadlineMs } = task;
      try {
        await withTimeout(Promise.resolve().then(tearDown), deadlineMs, `closing ${name}`);
      } catch (error) {
        this.options.logger.error('tear-down failed', { task: name, error: errorMessage(error) });
      }
    }
  }
}
