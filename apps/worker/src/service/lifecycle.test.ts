import { createLogger } from '@testrun/core/logger';
import { PassThrough } from 'node:stream';
import { Lifecycle } from './lifecycle';

function quietLogger() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').trim().split('\n')));
  return { logger: createLogger({ service: 'test', level: 'debug', stream }), lines };
}

/** A task that records its set-up and tear-down in `log`. */
function recorded(log: string[], name: string) {
  return () => {
    log.push(`up ${name}`);
    return { value: name, tearDown: () => void log.push(`down ${name}`) };
  };
}

test('tasks are set up in order and torn down in reverse, once', async () => {
  const log: string[] = [];
  const life = new Lifecycle({ logger: quietLogger().logger });
  expect(await life.task('a', recorded(log, 'a'))).toBe('a');
  await life.task('b', recorded(log, 'b'));
  await life.task('c', recorded(log, 'c'));
  expect(life.names).toEqual(['a', 'b', 'c']);
  await Promise.all([life.close(), life.close()]);
  await life.close();
  expect(log).toEqual(['up a', 'up b', 'up c', 'down c', 'down b', 'down a']);
  await expect(life.task('d', recorded(log, 'd'))).rejects.toThrow('closing');
});

test('a set-up that fails halfway through the start closes exactly what was opened, then rethrows', async () => {
  const log: string[] = [];
  const life = new Lifecycle({ logger: quietLogger().logger });
  const start = life.start(async (l) => {
    await l.task('db', recorded(log, 'db'));
    await l.task('redis', recorded(log, 'redis'));
    await l.task('browser', () => {
      log.push('up browser');
      throw new Error('no browser');
    });
    await l.task('http', recorded(log, 'http'));
  });
  await expect(start).rejects.toThrow('no browser');
  expect(log).toEqual(['up db', 'up redis', 'up browser', 'down redis', 'down db']);
});

test('a tear-down that fails or hangs is logged and the others still run, within its deadline', async () => {
  const log: string[] = [];
  const { logger, lines } = quietLogger();
  const life = new Lifecycle({ logger, tearDownMs: 50 });
  await life.task('first', recorded(log, 'first'));
  await life.task('hangs', () => ({ value: null, tearDown: () => new Promise(() => undefined) }));
  await life.task('throws', () => ({
    value: null,
    tearDown: () => {
      throw new Error('cannot close');
    },
  }));
  await life.task('slow but bounded longer', () => ({
    value: null,
    deadlineMs: 1_000,
    tearDown: () => new Promise<void>((resolve) => setTimeout(resolve, 100)).then(() => log.push('down slow')),
  }));
  const began = Date.now();
  await life.close();
  expect(Date.now() - began).toBeLessThan(1_000);
  expect(log).toEqual(['up first', 'down slow', 'down first']);
  await new Promise((resolve) => setImmediate(resolve));
  const failures = lines.map((line) => JSON.parse(line) as { message: string; task?: string; error?: string });
  expect(failures.filter((f) => f.message === 'tear-down failed')).toEqual([
    expect.objectContaining({ task: 'throws', error: 'cannot close' }),
    expect.objectContaining({ task: 'hangs', error: 'closing hangs did not finish within 50 ms' }),
  ]);
});
