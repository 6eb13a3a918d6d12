import { isPermanentWriteError, retryWrite } from './retry-write';

/** A write that fails `failures` times with `error`, then returns 'written'. */
function flaky(failures: number, error: Error) {
  let calls = 0;
  const write = () => {
    calls += 1;
    return calls <= failures ? Promise.reject(error) : Promise.resolve('written');
  };
  return { write, calls: () => calls };
}

const startingUp = Object.assign(new Error('the database system is starting up'), { code: '57P03' });

describe('retryWrite', () => {
  it('tries again while Postgres is unavailable, and returns once the write goes through', async () => {
    const w = flaky(3, startingUp);
    const retries: number[] = [];
    await expect(
      retryWrite(w.write, { boundMs: 10_000, firstDelayMs: 1, onRetry: (_e, attempt) => retries.push(attempt) }),
    ).resolves.toBe('written');
    expect(w.calls()).toBe(4);
    expect(retries).toEqual([1, 2, 3]);
  });

  it('gives up with the last error once the bound is spent', async () => {
    const w = flaky(Number.POSITIVE_INFINITY, startingUp);
    await expect(retryWrite(w.write, { boundMs: 30, firstDelayMs: 5, maxDelayMs: 5 })).rejects.toBe(startingUp);
    expect(w.calls()).toBeGreaterThan(1);
  });

  it('does not retry a permanent error', async () => {
    const unique = Object.assign(new Error('duplicate key'), { code: '23505' });
    const w = flaky(1, unique);
    await expect(retryWrite(w.write, { boundMs: 10_000, firstDelayMs: 1 })).rejects.toBe(unique);
    expect(w.calls()).toBe(1);
  });

  it.each([
    ['23505', true],
    ['42P01', true],
    ['P2002', true],
    ['P2024', false],
    ['P2028', false],
    ['57P03', false],
    ['ECONNREFUSED', false],
  ])('classifies code %s as permanent: %s', (code, permanent) => {
    expect(isPermanentWriteError(new Error('wrapped', { cause: Object.assign(new Error('x'), { code }) }))).toBe(
      permanent,
    );
  });

  /** A query's failure as Prisma 7 with the pg adapter throws it: a P2 code, the driver's error in `meta`. */
  const driverFailure = (code: string, cause: Record<string, string>) =>
    Object.assign(new Error('\nInvalid `prisma.$queryRawUnsafe()` invocation:\n\n\nRaw query failed.'), {
      code,
      meta: { driverAdapterError: Object.assign(new Error(cause.message ?? 'x'), { cause }) },
    });

  it.each([
    ['P2010', { kind: 'postgres', code: '57P03', message: 'the database system is shutting down' }, false],
    [
      'P2039',
      { kind: 'postgres', code: '57P01', message: 'terminating connection due to administrator command' },
      false,
    ],
    ['P2010', { kind: 'DatabaseNotReachable', host: '127.0.0.1' }, false],
    ['P2010', { kind: 'postgres', code: '22012', message: 'division by zero' }, true],
    ['P2039', { kind: 'postgres', code: '42601', message: 'syntax error' }, true],
  ])('judges a %s by the driver error it carries, %j: permanent %s', (code, cause, permanent) => {
    expect(isPermanentWriteError(driverFailure(code, cause))).toBe(permanent);
  });
});
