/**
 * When a failed delivery is tried again (docs/webhooks.md "Deliveries": the first retry within 30 s, growing delays,
 * for at least 24 h). After the n-th failed attempt the next one waits `RETRY_DELAYS_MS[n - 1]`, the last delay
 * repeating; once the attempt that just failed started 24 h or more after the retry window opened, the delivery is
 * `failed`. The delays follow the spirit of the Standard Webhooks schedule (seconds, then minutes, then hours).
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  30_000,
  2 * 60_000,
  10 * 60_000,
  30 * 60_000,
  60 * 60_000,
  2 * 60 * 60_000,
  4 * 60 * 60_000,
  8 * 60 * 60_000,
];

export const RETRY_WINDOW_MS = 24 * 60 * 60_000;

/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * 60 * 60_000;

export const retryDelayMs = (failedAttempts: number): number =>
  RETRY_DELAYS_MS[Math.min(Math.max(failedAttempts, 1), RETRY_DELAYS_MS.length) - 1]!;
