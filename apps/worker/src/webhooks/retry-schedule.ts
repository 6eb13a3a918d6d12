/** How a webhook message is retried (docs/WEBHOOKS.md has the default schedule as a table). */
export type WebhookRetryPolicy = {
  /** WEBHOOK_RETRY_FIRST_DELAY_MS: the wait before the first retry; each next wait doubles (default 10000). */
  firstDelayMs: number;
  /** WEBHOOK_RETRY_MAX_DELAY_MS: the longest wait between two attempts (default 4 h). */
  maxDelayMs: number;
  /** WEBHOOK_RETRY_WINDOW_MS: retries go on until their waits add up to this (default 24 h). */
  windowMs: number;
};

/**
 * The waits before each retry: doubling from `firstDelayMs`, capped at `maxDelayMs`, until they add
 * up to `windowMs`. With the defaults: 10 s, 20 s, 40 s … 2 h 50 min, then 4 h five times, the
 * last attempt about 25 h 40 min after the first (17 attempts).
 */
export function webhookRetryDelays(policy: WebhookRetryPolicy): number[] {
  const delays: number[] = [];
  let total = 0;
  for (let delay = policy.firstDelayMs; total < policy.windowMs; delay = Math.min(delay * 2, policy.maxDelayMs)) {
    delays.push(delay);
    total += delay;
  }
  return delays;
}
