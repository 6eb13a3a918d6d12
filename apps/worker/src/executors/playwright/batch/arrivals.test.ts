import { Arrivals } from './arrivals';

describe('Arrivals', () => {
  it('settles at once when no run is on its way, and once the last one arrives otherwise', async () => {
    const arrivals = new Arrivals();
    await arrivals.settled(60_000, () => false);
    arrivals.jobTook('a');
    arrivals.jobTook('b');
    let settled = false;
    const waiting = arrivals.settled(60_000, () => false).then(() => (settled = true));
    arrivals.arrived('a');
    await Promise.resolve();
    expect(settled).toBe(false);
    // Arriving twice counts once.
    arrivals.arrived('a');
    await Promise.resolve();
    expect(settled).toBe(false);
    arrivals.arrived('b');
    await waiting;
    expect(settled).toBe(true);
  });

  it('settles when enough have gathered, or at its bound while a run is still on its way', async () => {
    const arrivals = new Arrivals();
    arrivals.jobTook('slow');
    let enough = false;
    const waiting = arrivals.settled(60_000, () => enough);
    enough = true;
    arrivals.jobTook('other');
    arrivals.arrived('other');
    await waiting;
    // 'slow' never arrives: the bound ends the wait.
    await arrivals.settled(20, () => false);
  });
});

describe('Arrivals with idle slots', () => {
  it('waits, within its grace, for a job to come to an idle slot and for its run to arrive', async () => {
    const arrivals = new Arrivals(2);
    arrivals.jobTook('a');
    arrivals.arrived('a');
    let settled = false;
    const waiting = arrivals.settled(60_000, () => false, 60_000).then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(settled).toBe(false);
    arrivals.jobTook('b');
    await Promise.resolve();
    expect(settled).toBe(false);
    arrivals.arrived('b');
    await waiting;
    expect(settled).toBe(true);
  });

  it('settles at the end of its grace when a slot stays idle, and at once with none idle or no grace', async () => {
    const arrivals = new Arrivals(2);
    arrivals.jobTook('a');
    arrivals.arrived('a');
    await arrivals.settled(60_000, () => false, 20);
    await arrivals.settled(60_000, () => false);
    arrivals.jobTook('b');
    arrivals.arrived('b');
    await arrivals.settled(60_000, () => false, 60_000);
    arrivals.jobEnded();
    arrivals.jobEnded();
  });
});
