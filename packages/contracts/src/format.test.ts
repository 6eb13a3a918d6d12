import { formatDuration } from './format';

describe('formatDuration', () => {
  it.each([
    [0, '0 ms'],
    [850.4, '850 ms'],
    [1_000, '1 s'],
    [4_240, '4.2 s'],
    [42_400, '42 s'],
    [125_000, '2 min 05 s'],
    [3_720_000, '1 h 02 min'],
  ])('%d ms reads %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each([null, undefined, -1, Number.NaN, Number.POSITIVE_INFINITY])('%p has no duration', (ms) => {
    expect(formatDuration(ms)).toBe('–');
  });
});
