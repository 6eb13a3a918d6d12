import { webhookRetryDelays } from './retry-schedule';

describe('webhookRetryDelays', () => {
  it('doubles from the first delay, caps each wait, and covers the window', () => {
    const delays = webhookRetryDelays({ firstDelayMs: 10_000, maxDelayMs: 4 * 3_600_000, windowMs: 24 * 3_600_000 });
    expect(delays.slice(0, 4)).toEqual([10_000, 20_000, 40_000, 80_000]);
    expect(Math.max(...delays)).toBe(4 * 3_600_000);
    const total = delays.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(24 * 3_600_000);
    // One wait fewer would not reach the window.
    expect(total - (delays.at(-1) ?? 0)).toBeLessThan(24 * 3_600_000);
    expect(delays).toHaveLength(16);
  });

  it('gives at least one retry for any window', () => {
    expect(webhookRetryDelays({ firstDelayMs: 100, maxDelayMs: 100, windowMs: 1 })).toEqual([100]);
  });
});
