import fc from 'fast-check';
import { batchSize, batchWorkers, groupOf, leadsGroupOf, planBatch, type BatchCandidate } from './batch-plan';

// The sharing rule of Playwright batches, without the database (test/db/playwright-batches.test.ts
// checks the reservation that applies it).

const run = (id: string, file: string, more: Partial<BatchCandidate> = {}): BatchCandidate => ({
  id,
  file,
  parallel: false,
  wholeSuite: false,
  ...more,
});

const alone = { share: 1, maxRuns: 100, liveBatches: 0 };

describe('groupOf and leadsGroupOf (Playwright: a file shares a worker unless its test is parallel)', () => {
  it('groups a test by its file, a parallel test by itself, every test of a `workers: 1` suite run together', () => {
    expect(groupOf(run('a', 'x.spec.ts'))).toBe('x.spec.ts');
    expect(groupOf(run('a', 'x.spec.ts', { parallel: true }))).toBe('a');
    expect(groupOf(run('a', 'x.spec.ts', { wholeSuite: true }))).toBe('');
    expect(groupOf(run('b', 'y.spec.ts', { wholeSuite: true, parallel: true }))).toBe('');
  });

  it('counts a candidate in a led run`s group when it stays with that file, or its suite run is one group', () => {
    expect(leadsGroupOf(run('a', 'x.spec.ts'), ['x.spec.ts'])).toBe(true);
    expect(leadsGroupOf(run('a', 'x.spec.ts'), ['y.spec.ts', 'x.spec.ts'])).toBe(true);
    expect(leadsGroupOf(run('a', 'x.spec.ts'), ['y.spec.ts'])).toBe(false);
    expect(leadsGroupOf(run('a', 'x.spec.ts', { parallel: true }), ['x.spec.ts'])).toBe(false);
    expect(leadsGroupOf(run('a', 'x.spec.ts', { wholeSuite: true }), ['y.spec.ts'])).toBe(true);
    expect(leadsGroupOf({ ...run('a', ''), file: null }, [null])).toBe(false);
  });
});

describe('batchSize', () => {
  it('shares the suite run out between the ways still free, at most maxRuns a worker', () => {
    // 9 candidates and the leader over 2 ways: 5 runs, the leader and 4 more.
    expect(batchSize(9, 1, { share: 2, maxRuns: 100, liveBatches: 0 })).toBe(4);
    // One of the two ways is taken by a live batch: this one takes them all.
    expect(batchSize(9, 1, { share: 2, maxRuns: 100, liveBatches: 1 })).toBe(9);
    // More live batches than the share: still at least its own way.
    expect(batchSize(9, 1, { share: 2, maxRuns: 100, liveBatches: 5 })).toBe(9);
    expect(batchSize(9, 1, { share: 1, maxRuns: 3, liveBatches: 0 })).toBe(2);
    // Two workers take two of four ways, and maxRuns counts a worker each.
    expect(batchSize(10, 2, { share: 4, maxRuns: 100, liveBatches: 0 })).toBe(4);
    expect(batchSize(10, 2, { share: 1, maxRuns: 3, liveBatches: 0 })).toBe(4);
  });
});

describe('planBatch', () => {
  it('takes the leader`s file first, then whole files in queue order while fewer than its size are taken', () => {
    const candidates = [run('b1', 'b.spec.ts'), run('a2', 'a.spec.ts'), run('b2', 'b.spec.ts'), run('c1', 'c.spec.ts')];
    expect(planBatch(candidates, { leading: ['a.spec.ts'], share: 2, maxRuns: 100, liveBatches: 0 })).toEqual([
      'a2',
      'b1',
      'b2',
    ]);
  });

  it('never splits a file, even past its size', () => {
    const candidates = [run('a2', 'a.spec.ts'), run('a3', 'a.spec.ts'), run('a4', 'a.spec.ts')];
    expect(planBatch(candidates, { leading: ['a.spec.ts'], share: 1, maxRuns: 2, liveBatches: 0 })).toEqual([
      'a2',
      'a3',
      'a4',
    ]);
    const others = [run('b1', 'b.spec.ts'), run('b2', 'b.spec.ts'), run('b3', 'b.spec.ts')];
    expect(planBatch(others, { leading: ['a.spec.ts'], share: 1, maxRuns: 2, liveBatches: 0 })).toEqual([
      'b1',
      'b2',
      'b3',
    ]);
  });

  it('shares out a parallel file test by test, like Playwright`s workers', () => {
    const candidates = ['2', '3', '4', '5'].map((n) => run(`p${n}`, 'p.spec.ts', { parallel: true }));
    expect(planBatch(candidates, { leading: ['p.spec.ts'], share: 2, maxRuns: 100, liveBatches: 0 })).toEqual([
      'p2',
      'p3',
    ]);
  });

  it('takes the whole suite run when its config says `workers: 1`', () => {
    const candidates = [run('a', 'a.spec.ts'), run('b', 'b.spec.ts', { parallel: true })].map((c) => ({
      ...c,
      wholeSuite: true,
    }));
    expect(planBatch(candidates, { leading: ['z.spec.ts'], share: 4, maxRuns: 1, liveBatches: 0 })).toEqual(['a', 'b']);
  });

  it('takes the files of every run it leads, and gives a batch of joined runs its ids even with nothing to take', () => {
    const candidates = [run('c1', 'c.spec.ts'), run('a2', 'a.spec.ts'), run('b2', 'b.spec.ts')];
    const led = { leading: ['a.spec.ts', 'b.spec.ts'], share: 8, maxRuns: 100, liveBatches: 0 };
    expect(planBatch(candidates, led)).toEqual(['a2', 'b2']);
    expect(planBatch([], led)).toEqual([]);
  });

  it('is null when the leader would be alone', () => {
    expect(planBatch([], { leading: ['a.spec.ts'], ...alone })).toBeNull();
    expect(planBatch([run('b1', 'b.spec.ts')], { leading: ['a.spec.ts'], ...alone, maxRuns: 1 })).toBeNull();
  });
});

describe('planBatch properties', () => {
  const files = fc.constantFrom('a.spec.ts', 'b.spec.ts', 'c.spec.ts', 'd.spec.ts');
  const candidates = fc
    .array(fc.record({ file: files, parallel: fc.boolean() }), { maxLength: 30 })
    .chain((rows) => fc.boolean().map((wholeSuite) => rows.map((row, i) => ({ id: `r${i}`, ...row, wholeSuite }))));
  const share = fc.record({
    leading: fc.array(files, { minLength: 1, maxLength: 4 }),
    share: fc.integer({ min: 1, max: 8 }),
    maxRuns: fc.integer({ min: 1, max: 10 }),
    liveBatches: fc.integer({ min: 0, max: 8 }),
  });

  it('takes every run of a led group, whole groups only, and stops once it has its size', () => {
    fc.assert(
      fc.property(candidates, share, (all, request) => {
        const ids = planBatch(all, request) ?? [];
        const taken = new Set(ids);
        expect(taken.size).toBe(ids.length);
        for (const c of all) if (leadsGroupOf(c, request.leading)) expect(taken.has(c.id)).toBe(true);
        const takenGroups = new Set(all.filter((c) => taken.has(c.id)).map(groupOf));
        for (const c of all) if (takenGroups.has(groupOf(c))) expect(taken.has(c.id)).toBe(true);
        // Without the last group it took it had fewer than its size.
        const size = batchSize(all.length, request.leading.length, request);
        const led = all.filter((c) => leadsGroupOf(c, request.leading)).length;
        if (ids.length > Math.max(led, size)) {
          const last = all.find((c) => c.id === ids[ids.length - 1]);
          const lastGroup = all.filter((c) => last && groupOf(c) === groupOf(last)).length;
          expect(ids.length - lastGroup).toBeLessThan(size);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('batchWorkers', () => {
  it('runs a Playwright worker a slot held, at most the config`s `workers`', () => {
    expect(batchWorkers(3, undefined)).toBe(3);
    expect(batchWorkers(3, 2)).toBe(2);
    expect(batchWorkers(1, 4)).toBe(1);
  });
});
