import { createHook } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import { Server, Socket } from 'node:net';
import { relative, resolve } from 'node:path';
import { runInThisContext } from 'node:vm';

/*
 * What keeps a jest worker alive (`TESTRUN_LEAK_REPORT=<file> pnpm exec jest …`, docs/TESTING.md):
 * jest tells a worker to stop by removing its message listener, and the worker exits only once
 * nothing holds its event loop; after 500 ms jest kills it with the warning "A worker process has
 * failed to exit gracefully". This records, for every socket, server, timer and child process made in
 * the worker, the test file that ran then and the stack that made it, and appends to the file:
 *   - at the start of each test file, what earlier files left open (timers that still run included);
 *   - when jest tells the worker to stop, everything that still holds it, 200 ms later.
 * One hook per worker process: test files get fresh globals, so the state lives on the real ones.
 */

interface Made {
  file: string;
  stack: string;
}
interface TimerState {
  _destroyed?: boolean;
  _idleTimeout?: number;
  hasRef(): boolean;
}
interface State {
  /** Timers still to run, by async id. */
  timers: Map<number, Made & { timer: TimerState }>;
  /** Handles (sockets, servers, pipes, processes) and the objects that own them. */
  made: WeakMap<object, Made>;
  file: string;
  out: string;
}
interface Owner {
  _handle?: object | null;
  server?: Owner;
  constructor?: { name?: string };
  address?: () => unknown;
  remoteAddress?: string;
  remotePort?: number;
  localAddress?: string;
  localPort?: number;
  listening?: boolean;
  spawnargs?: string[];
}

const realGlobal = runInThisContext('globalThis') as typeof globalThis & { __testrunLeaks?: State };
const realProcess = realGlobal.process as NodeJS.Process & { _getActiveHandles(): Owner[] };
const root = resolve(__dirname, '../..');
const HANDLES = new Set(['TCPWRAP', 'TCPSERVERWRAP', 'PIPEWRAP', 'PIPESERVERWRAP', 'UDPWRAP', 'PROCESSWRAP']);

function stackHere(): string {
  const holder: { stack?: string } = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  Error.captureStackTrace(holder);
  Error.stackTraceLimit = limit;
  return ownFrames(holder.stack ?? '');
}

function install(out: string): State {
  const state: State = { timers: new Map(), made: new WeakMap(), file: '(before any file)', out };
  createHook({
    init(asyncId, type, _trigger, resource) {
      if (type === 'Timeout') {
        const timer = resource as TimerState;
        state.timers.set(asyncId, { file: state.file, stack: stackHere(), timer });
      } else if (HANDLES.has(type)) {
        state.made.set(resource, { file: state.file, stack: stackHere() });
      }
    },
    destroy(asyncId) {
      state.timers.delete(asyncId);
    },
  }).enable();
  // A server's handle is made on the next tick, a connection's after its lookup: their stacks are
  // taken where the test or the product called listen() or connect().
  for (const proto of [Server.prototype, Socket.prototype] as unknown as Record<string, unknown>[]) {
    const method = proto === (Server.prototype as unknown) ? 'listen' : 'connect';
    const original = proto[method] as (this: object, ...args: unknown[]) => unknown;
    proto[method] = function (this: object, ...args: unknown[]) {
      if (!state.made.has(this)) state.made.set(this, { file: state.file, stack: stackHere() });
      return original.apply(this, args);
    };
  }
  // Jest's message to stop is [2, …] (jest-worker's CHILD_MESSAGE_END); the listener goes with it,
  // so that it does not itself keep the IPC channel open.
  const onMessage = (message: unknown): void => {
    if (!Array.isArray(message) || message[0] !== 2) return;
    realProcess.removeListener('message', onMessage);
    setTimeout(() => report(state, 'when told to stop'), 200).unref();
    // What the exit itself costs: jest kills a worker that takes longer than 500 ms to be gone,
    // whether its loop is held or its exit handlers (registered before this one) take that long.
    const told = Date.now();
    let emptied = told;
    realProcess.once('beforeExit', () => (emptied = Date.now()));
    realProcess.once('exit', () =>
      appendFileSync(
        state.out,
        `[pid ${realProcess.pid}] exits (last file ${state.file}): its loop emptied ${emptied - told} ms after it was told to stop, the exit handlers before this one took ${Date.now() - emptied} ms\n`,
      ),
    );
  };
  realProcess.on('message', onMessage);
  return state;
}

/**
 * The frames of the stack in the repository's own code; with none, the first frames of the
 * packages' code (`node_modules/<package>/…`), for what a library made on its own.
 */
function ownFrames(stack: string): string {
  const lines = stack
    .split('\n')
    .slice(1)
    .filter((line) => line.includes(root) && !line.includes('leak-report'))
    .map((line) => line.trim().replace(`${root}/`, ''));
  const own = lines.filter((line) => !line.includes('node_modules'));
  if (own.length > 0) return own.slice(0, 8).join(' < ');
  const packages = lines.map((line) => line.replace(/\S*node_modules\//, 'node_modules/'));
  return packages.slice(0, 3).join(' < ') || '(no frame of the repository or its packages)';
}

/** Jest's own timers: the time limit of the test or hook under way (the report's own hook's included). */
const isJestTimer = (stack: string): boolean => stack.includes('node_modules/jest-circus/');

function origin(state: State, owner: Owner): string {
  const made = state.made.get(owner) ?? (owner._handle ? state.made.get(owner._handle) : undefined);
  return made ? `made in ${made.file}: ${made.stack}` : 'origin unknown';
}

function describe(state: State, owner: Owner): string {
  const kind = owner.constructor?.name ?? 'handle';
  if (kind === 'Server') return `Server listening on ${JSON.stringify(owner.address?.())}, ${origin(state, owner)}`;
  if (kind === 'Socket' && typeof owner.remoteAddress !== 'function') {
    const ends = `local ${owner.localAddress}:${owner.localPort} peer ${owner.remoteAddress}:${owner.remotePort}`;
    const accepted = owner.server
      ? ` accepted by the server on ${JSON.stringify(owner.server.address?.())} (listening ${owner.server.listening}), server ${origin(state, owner.server)}; socket`
      : '';
    return `Socket ${ends}${accepted} ${origin(state, owner)}`;
  }
  if (kind === 'ChildProcess') return `ChildProcess ${owner.spawnargs?.join(' ')}, ${origin(state, owner)}`;
  return `${kind}, ${origin(state, owner)}`;
}

function report(state: State, when: string): void {
  const lines: string[] = [];
  for (const owner of realProcess._getActiveHandles()) {
    // The jest worker's own IPC channel and stdio.
    if (owner === (realProcess as unknown as { channel?: unknown }).channel) continue;
    if ((owner as { fd?: number }).fd !== undefined && [0, 1, 2].includes((owner as { fd: number }).fd)) continue;
    lines.push(`  ${describe(state, owner)}`);
  }
  for (const { timer, file, stack } of state.timers.values()) {
    if (timer._destroyed || timer._idleTimeout === -1 || !timer.hasRef() || isJestTimer(stack)) continue;
    lines.push(`  Timeout ${timer._idleTimeout} ms, made in ${file}: ${stack}`);
  }
  const active = realProcess.getActiveResourcesInfo().join(',');
  appendFileSync(
    state.out,
    `[pid ${realProcess.pid}] ${when} (last file ${state.file}): ${lines.length} holding; active: ${active}\n${lines.join('\n')}${lines.length ? '\n' : ''}`,
  );
}

const out = process.env.TESTRUN_LEAK_REPORT;
if (out) {
  const state = (realGlobal.__testrunLeaks ??= install(out));
  const file = relative(root, expect.getState().testPath ?? '?');
  // Jest can go from one file's last hook to the next file's set-up without turning the event loop
  // once, so handles closed at the very end are still closing here: the report waits a little.
  beforeAll(async () => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    report(state, `before ${file}, what earlier files left`);
    state.file = file;
  });
}
