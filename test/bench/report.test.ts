import { spread } from '../../bench/report';

/* The figures the benchmarks write: a median of two trials is their mean, not the better one. */

test('the median of an even count is the mean of the two middle values', () => {
  const two = spread([1.04, 0.85]);
  expect(two.median).toBeCloseTo(0.945, 10);
  expect([two.min, two.max]).toEqual([0.85, 1.04]);
  expect(spread([4, 1, 3, 2])).toEqual({ median: 2.5, min: 1, max: 4 });
});

test('the median of an odd count is the middle value; an empty sample is refused', () => {
  expect(spread([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3 });
  expect(spread([7])).toEqual({ median: 7, min: 7, max: 7 });
  expect(() => spread([])).toThrow();
});
