/** Centrifugo keeps an idempotent publish result for 5 minutes unless told otherwise (`idempotent_result_ttl`). */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 5 * 60_000;
