import { TimeoutError, withTimeout } from './with-timeout';

describe('withTimeout', () => {
  it('settles with the value of work that finishes in time', async () => {
    await expect(withTimeout(Promise.resolve(7), 1_000, 'answer')).resolves.toBe(7);
  });

  it('passes on the rejection of work that fails in time', async () => {
    await expect(withTimeout(Promise.reject(new Error('boom')), 1_000, 'answer')).rejects.toThrow('boom');
  });

  it('rejects with a TimeoutError naming the work when it does not settle', async () => {
    const never = new Promise<never>(() => undefined);
    const outcome = withTimeout(never, 5, 'Postgres');
    await expect(outcome).rejects.toBeInstanceOf(TimeoutError);
    await expect(outcome).rejects.toThrow('Postgres did not finish within 5 ms');
  });

  it('absorbs a rejection that comes after the deadline', async () => {
    let fail: (e: Error) => void = () => undefined;
    const late = new Promise<never>((_, reject) => {
      fail = reject;
    });
    await expect(withTimeout(late, 5, 'late work')).rejects.toBeInstanceOf(TimeoutError);
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    fail(new Error('too late'));
    await new Promise((r) => setImmediate(r));
    process.off('unhandledRejection', unhandled);
    expect(unhandled).not.toHaveBeenCalled();
  });
});
