import { settleScreenshot, type SettleInput } from './settle-screenshot';
import { StepFailure } from './step-failure';

// The settling loop of expectScreenshot, as Playwright's page expectScreenshot runs it: screenshots
// stand for themselves (a buffer per screenshot), two are the same when their bytes are.

const shot = (text: string) => Buffer.from(text);
const differ: SettleInput['differ'] = (actual, expected) =>
  actual.equals(expected) ? null : { message: `${actual.toString()} is not ${expected.toString()}`, diff: null };

/** A settle whose screenshots are `shots` in turn (the last one again after them); how many were taken. */
async function settle(shots: string[], expected: string | null, options: Partial<SettleInput> = {}) {
  let taken = 0;
  const shoot = () => Promise.resolve(shot(shots[Math.min(taken++, shots.length - 1)] ?? ''));
  const settled = await settleScreenshot({
    shoot,
    differ,
    expected: expected === null ? null : shot(expected),
    endsAt: Date.now() + 10_000,
    ...options,
  });
  return { settled, taken };
}

it('without a baseline, takes screenshots until two in a row are the same, and gives that one', async () => {
  expect(await settle(['a', 'a'], null)).toEqual({ settled: { kind: 'taken', actual: shot('a') }, taken: 2 });
  expect(await settle(['a', 'b', 'b'], null)).toEqual({ settled: { kind: 'taken', actual: shot('b') }, taken: 3 });
});

it('with a baseline, a first screenshot that matches it is enough', async () => {
  expect(await settle(['e'], 'e')).toEqual({ settled: { kind: 'matched' }, taken: 1 });
});

it('with a baseline the first screenshot differs from, compares the stable one', async () => {
  expect(await settle(['b', 'b'], 'e')).toEqual({
    settled: { kind: 'different', actual: shot('b'), message: 'b is not e', diff: null },
    taken: 2,
  });
  // The page was still moving at first: once it held still, it matched.
  expect(await settle(['b', 'e', 'e'], 'e')).toEqual({ settled: { kind: 'matched' }, taken: 3 });
});

it('gives up as unstable when the step ends before two screenshots in a row were the same', async () => {
  const started = Date.now();
  const { settled, taken } = await settle(['a', 'b', 'c', 'd', 'e'], null, { endsAt: Date.now() + 400 });
  expect(settled).toEqual({ kind: 'unstable' });
  // 0, 100 and 250 ms fit in the step; the next wait of 500 ms would not.
  expect(taken).toBe(3);
  expect(Date.now() - started).toBeLessThan(400);
});

it('says unstable when a later screenshot is cut off by the end of the step, and throws a first one', async () => {
  let taken = 0;
  const failing = async () => {
    if (taken++ === 0) return shot('a');
    await new Promise((resolve) => setTimeout(resolve, 150));
    throw new Error('Timeout 100ms exceeded');
  };
  const endsAt = Date.now() + 150;
  expect(await settleScreenshot({ shoot: failing, differ, expected: null, endsAt })).toEqual({ kind: 'unstable' });
  const never = () => Promise.reject(new Error('element is not visible'));
  await expect(settleScreenshot({ shoot: never, differ, expected: null, endsAt: Date.now() + 1_000 })).rejects.toThrow(
    'element is not visible',
  );
});

it('ends cancelled at once when the run is cancelled during a wait', async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 20);
  const started = Date.now();
  const settling = settle(['a', 'b', 'c'], null, { signal: controller.signal });
  await expect(settling).rejects.toBeInstanceOf(StepFailure);
  await expect(settling).rejects.toMatchObject({ problem: { code: 'cancelled' } });
  expect(Date.now() - started).toBeLessThan(500);
});

it('decodes no more than it must: equal bytes are the same, the first difference from the baseline is reused', async () => {
  const calls: string[] = [];
  const counting: SettleInput['differ'] = (actual, expected) => {
    calls.push(`${actual.toString()}/${expected.toString()}`);
    return differ(actual, expected);
  };
  expect((await settle(['b', 'b'], 'e', { differ: counting })).settled).toMatchObject({ kind: 'different' });
  expect(calls).toEqual(['b/e']);
});
