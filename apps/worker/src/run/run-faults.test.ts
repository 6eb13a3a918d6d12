import { RunFaults, untilFaulted } from './run-faults';

/** Where a callback scheduled by `schedule` finds itself: the owner's run id, or null outside every run. */
function ownerSeenBy(faults: RunFaults, schedule: (callback: () => void) => void): Promise<string | null> {
  return new Promise((resolve) => schedule(() => resolve(faults.current()?.runId ?? null)));
}

describe('RunFaults', () => {
  it("names the run whose code scheduled a callback, and no run outside every run's", async () => {
    const faults = new RunFaults();
    const seen = await faults.run('run-a', async () => {
      await Promise.resolve();
      return Promise.all([
        ownerSeenBy(faults, (callback) => setTimeout(callback, 1)),
        ownerSeenBy(faults, (callback) => setImmediate(callback)),
        faults.outside(() => ownerSeenBy(faults, (callback) => setTimeout(callback, 1))),
      ]);
    });
    expect(seen).toEqual(['run-a', 'run-a', null]);
    expect(faults.current()).toBeUndefined();
  });

  it('ends the attempt watched with the fault, and closes its context', async () => {
    const faults = new RunFaults();
    let closed = 0;
    const outcome = faults.run('run-b', (owner) => {
      const never = new Promise<string>(() => undefined);
      const attempt = untilFaulted(never, owner, { forceClose: () => (closed += 1) });
      expect(owner.fault(new Error('boom'))).toBe(true);
      return attempt;
    });
    await expect(outcome).rejects.toThrow('boom');
    expect(closed).toBe(1);
  });

  it('tells no attempt of a fault that came after the run ended', async () => {
    const faults = new RunFaults();
    const owner = await faults.run('run-c', (o) => untilFaulted(Promise.resolve(o), o, {}));
    expect(owner.live).toBe(false);
    expect(owner.fault(new Error('late'))).toBe(false);
  });

  it('masks the secrets of every run under way in a fault of none', async () => {
    const faults = new RunFaults();
    const text = await faults.run('run-d', (owner) => {
      owner.mask = (t) => t.replaceAll('hunter2', '••••');
      return Promise.resolve(faults.maskAll('token hunter2 leaked'));
    });
    expect(text).toBe('token •••• leaked');
  });
});
